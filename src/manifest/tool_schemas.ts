/**
 * A command tool's `input` and `output` JSON Schemas, checked at load for what a host refuses: MCP
 * takes an object schema (`type: object`, `properties` a mapping of schemas, `required` a list of
 * names) and a client that compiles it refuses the whole tool list over one bad schema; a type no
 * JSON Schema has (`strng`) is found where it is written. One located line per problem, before
 * anything is served. A walk, not a compile: what only the validator finds (a bad `pattern`, a
 * dangling `$ref`) is `check`'s and the first call's (`mcp/json_schema.ts`), so loading a manifest
 * (every session's start) compiles nothing.
 */
import { formatPath, type LocatedIssue, type PathSeg, quote, type SourceMap } from "./locate.ts";
import { suggest } from "./names.ts";

const TYPES = ["string", "number", "integer", "boolean", "object", "array", "null"];
const EXAMPLE = "e.g. input: { type: object, properties: { name: { type: string } } }";
/** Keywords whose value is one schema, a list of schemas, or a mapping of names to schemas. */
const ONE = [
  "additionalItems",
  "additionalProperties",
  "contains",
  "propertyNames",
  "not",
  "if",
  "then",
  "else",
];
const LIST = ["allOf", "anyOf", "oneOf", "prefixItems"];
const MAP = ["properties", "patternProperties", "definitions", "$defs", "dependencies", "dependentSchemas"];

type Problem = { at: PathSeg[]; message: string };
const isMapping = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

/** Tools' `input` and `output` schemas that a host would refuse, as located errors. */
export function checkToolSchemas(
  tools: Record<string, { input?: Record<string, unknown>; output?: Record<string, unknown> }>,
  src: SourceMap,
  errors: LocatedIssue[],
): void {
  for (const [name, t] of Object.entries(tools)) {
    for (const field of ["input", "output"] as const) {
      const schema = t[field];
      if (schema === undefined) continue;
      const base: PathSeg[] = ["tools", name, field];
      for (const p of schemaProblems(schema, field)) {
        const at = [...base, ...p.at];
        errors.push(src.issue(at, `${formatPath(at)}${p.message}`));
      }
    }
  }
}

/** What is wrong with a tool's `input`/`output` schema (messages follow its path). Pure. */
export function schemaProblems(schema: Record<string, unknown>, field: "input" | "output"): Problem[] {
  const problems = topLevel(schema, field);
  return problems.length > 0 ? problems : unknownTypes(schema);
}

/** MCP's own rules for the top of the schema. */
function topLevel(schema: Record<string, unknown>, field: "input" | "output"): Problem[] {
  const what = field === "input" ? "a tool's arguments" : "a tool's structured output";
  if (schema.type === undefined) {
    const looksLikeProperties = schema.properties === undefined && Object.values(schema).some(isMapping);
    return [{
      at: [],
      message: ` must have type: object (MCP takes ${what} as an object)${
        looksLikeProperties ? ", with each argument under properties:" : ""
      }, ${EXAMPLE.replace("input", field)}`,
    }];
  }
  if (schema.type !== "object") {
    const shown = typeof schema.type === "string" ? quote(schema.type) : JSON.stringify(schema.type);
    return [{
      at: ["type"],
      message: `: ${shown} must be object; MCP takes ${what} as an object, ${
        EXAMPLE.replace("input", field)
      }`,
    }];
  }
  const problems: Problem[] = [];
  const { properties, required } = schema;
  if (properties !== undefined && !isMapping(properties)) {
    problems.push({
      at: ["properties"],
      message: " must be a mapping of argument names to schemas, e.g. properties: { name: { type: string } }",
    });
  } else {
    for (const [key, value] of Object.entries(properties ?? {})) {
      if (!isMapping(value)) {
        problems.push({
          at: ["properties", key],
          message: ` must be a schema, e.g. ${key}: { type: string }`,
        });
      }
    }
  }
  if (required !== undefined && !(Array.isArray(required) && required.every((r) => typeof r === "string"))) {
    problems.push({ at: ["required"], message: " must be a list of argument names, e.g. required: [name]" });
  }
  return problems;
}

/** Every `type` that names no JSON Schema type, and every subschema that is not one; iterative. */
function unknownTypes(root: Record<string, unknown>): Problem[] {
  const problems: Problem[] = [];
  const stack: [unknown, PathSeg[]][] = [[root, []]];
  while (stack.length > 0) {
    const [schema, at] = stack.pop()!;
    if (typeof schema === "boolean") continue;
    if (!isMapping(schema)) {
      problems.push({ at, message: " must be a schema (a mapping such as { type: string }, or true/false)" });
      continue;
    }
    const types: [unknown, PathSeg[]][] = Array.isArray(schema.type)
      ? schema.type.map((t, i) => [t, [...at, "type", i]])
      : [[schema.type, [...at, "type"]]];
    for (const [t, where] of types) {
      if (t === undefined || (typeof t === "string" && TYPES.includes(t))) continue;
      const guess = typeof t === "string" ? suggest(t, TYPES) : undefined;
      const shown = typeof t === "string" ? quote(t) : JSON.stringify(t);
      problems.push({
        at: where,
        message: `: ${shown} is not a JSON Schema type; ${
          guess ? `did you mean '${guess}'?` : `use one of ${TYPES.join(", ")}`
        }`,
      });
    }
    const push = (v: unknown, p: PathSeg[]) => stack.push([v, p]);
    for (const k of ONE) if (schema[k] !== undefined) push(schema[k], [...at, k]);
    for (const k of LIST) {
      if (Array.isArray(schema[k])) (schema[k] as unknown[]).forEach((s, i) => push(s, [...at, k, i]));
    }
    for (const k of MAP) {
      if (!isMapping(schema[k])) continue;
      for (const [name, s] of Object.entries(schema[k])) {
        // `dependencies` also takes lists of names (draft-07)
        if (!(k === "dependencies" && Array.isArray(s))) push(s, [...at, k, name]);
      }
    }
    if (Array.isArray(schema.items)) schema.items.forEach((s, i) => push(s, [...at, "items", i]));
    else if (schema.items !== undefined) push(schema.items, [...at, "items"]);
  }
  return problems.reverse();
}
