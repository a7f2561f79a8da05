/**
 * A call's arguments against a tool's input schema (JSON Schema, validated by ajv as the MCP SDK
 * does: formats on, unknown keywords tolerated; `json_schema.ts` compiles it), with what
 * is wrong said in plain words that name the argument as the caller wrote it: `name must be a
 * string`, `who.first is required`, `colour is not an argument of hello (its arguments: name,
 * times)`; never a validator's internal path such as `data/name`.
 */
import type { ErrorObject } from "ajv";
import { compileSchema } from "./json_schema.ts";

/**
 * `ok`, or `invalid` with one line naming every problem (`; `-separated), or `unusable-schema`
 * when the schema itself cannot be compiled (the caller names where it came from).
 */
export type ArgumentCheck =
  | { kind: "ok" }
  | { kind: "invalid"; why: string }
  | { kind: "unusable-schema"; why: string };

export function checkArguments(tool: string, schema: object, args: unknown): ArgumentCheck {
  const validate = compileSchema(schema);
  if (typeof validate !== "function") return { kind: "unusable-schema", why: validate.unusable };
  if (validate(args)) return { kind: "ok" };
  const known = Object.keys((schema as { properties?: Record<string, unknown> }).properties ?? {});
  return { kind: "invalid", why: describeErrors(tool, known, validate.errors ?? []) };
}

/** ajv's errors as one line of plain words. Pure. */
export function describeErrors(tool: string, known: string[], errors: readonly ErrorObject[]): string {
  // A failed anyOf/oneOf reports each branch's errors too; the one line about the choice is enough.
  const choices = errors.filter((e) => e.keyword === "anyOf" || e.keyword === "oneOf");
  const kept = errors.filter((e) =>
    !choices.some((c) => c !== e && e.schemaPath.startsWith(c.schemaPath.replace(/\/(anyOf|oneOf)$/, "/$1/")))
  );
  const lines = kept.map((e) => describe(tool, known, e));
  return [...new Set(lines)].join("; ");
}

function describe(tool: string, known: string[], e: ErrorObject): string {
  const at = argumentPath(e.instancePath);
  const subject = at || "the arguments";
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case "type":
      return `${subject} must be ${kinds(String(p.type))}`;
    case "required":
      return `${child(e.instancePath, String(p.missingProperty))} is required`;
    case "additionalProperties": {
      const extra = child(e.instancePath, String(p.additionalProperty));
      return at
        ? `${extra} is not allowed here`
        : `${extra} is not an argument of ${tool}${
          known.length ? ` (its arguments: ${known.join(", ")})` : ""
        }`;
    }
    case "enum":
      return `${subject} must be one of: ${(p.allowedValues as unknown[]).map(shown).join(", ")}`;
    case "const":
      return `${subject} must be ${shown(p.allowedValue)}`;
    case "minimum":
      return `${subject} must be at least ${p.limit}`;
    case "maximum":
      return `${subject} must be at most ${p.limit}`;
    case "exclusiveMinimum":
      return `${subject} must be greater than ${p.limit}`;
    case "exclusiveMaximum":
      return `${subject} must be less than ${p.limit}`;
    case "multipleOf":
      return `${subject} must be a multiple of ${p.multipleOf}`;
    case "minLength":
      return `${subject} must be at least ${p.limit} character${p.limit === 1 ? "" : "s"} long`;
    case "maxLength":
      return `${subject} must be at most ${p.limit} character${p.limit === 1 ? "" : "s"} long`;
    case "minItems":
      return `${subject} must have at least ${p.limit} item${p.limit === 1 ? "" : "s"}`;
    case "maxItems":
      return `${subject} must have at most ${p.limit} item${p.limit === 1 ? "" : "s"}`;
    case "uniqueItems":
      return `${subject} must not repeat an item`;
    case "pattern":
      return `${subject} must match ${p.pattern}`;
    case "format":
      return `${subject} must be a valid ${p.format}`;
    case "anyOf":
    case "oneOf":
      return `${subject} matches none of the shapes it may take`;
    default:
      return `${subject} ${e.message ?? "is not valid"}`;
  }
}

/** `/who/first` → `who.first`, `/items/0` → `items[0]` (JSON Pointer escapes undone). */
function argumentPath(pointer: string): string {
  let out = "";
  for (const raw of pointer.split("/").slice(1)) {
    const seg = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (/^\d+$/.test(seg)) out += `[${seg}]`;
    else if (/^[\p{L}\p{N}_$-]+$/u.test(seg)) out += out ? `.${seg}` : seg;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

/** The argument `key` inside the value at `pointer`. */
function child(pointer: string, key: string): string {
  return argumentPath(`${pointer}/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`);
}

const ARTICLE: Record<string, string> = {
  string: "a string",
  number: "a number",
  integer: "an integer",
  boolean: "true or false",
  object: "an object",
  array: "an array",
  null: "null",
};

/** `string,number` → `a string or a number`. */
function kinds(types: string): string {
  return types.split(",").map((t) => ARTICLE[t] ?? t).join(" or ");
}

function shown(v: unknown): string {
  return typeof v === "string" ? v : JSON.stringify(v);
}
