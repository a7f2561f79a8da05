/**
 * Editing one table of a TOML file (Codex's `config.toml`) in place. `toml-eslint-parser` (a
 * complete TOML 1.0 parser that keeps every node's range and every comment) finds the table;
 * the text is spliced here: a new table goes after the last table of its family (or at the end),
 * after a blank line, and removing it takes exactly those lines away again. Also renders whole
 * TOML files (Codex subagents).
 */
import { getStaticTOMLValue, parseTOML } from "toml-eslint-parser";
import type { Found, Json, JsonObject } from "./json.ts";
import {
  appendBlock,
  bomHint,
  detectEol,
  EditError,
  insertLines,
  lineEnd,
  lineStart,
  removeLines,
  trimEnd,
} from "./lines.ts";

type Program = ReturnType<typeof parseTOML>;
type TableNode = Extract<Program["body"][0]["body"][number], { type: "TOMLTable" }>;

function parse(text: string, file: string): Program {
  try {
    return parseTOML(text, { tomlVersion: "1.0" });
  } catch (err) {
    throw new EditError(
      `${file} is not valid TOML (${(err as Error).message.split("\n")[0]})${bomHint(text)}; fix it first`,
    );
  }
}

function valueAt(ast: Program, path: string[]): { found: boolean; value: unknown } {
  let v: unknown = getStaticTOMLValue(ast);
  for (const k of path) {
    if (v === null || typeof v !== "object" || Array.isArray(v) || !Object.hasOwn(v, k)) {
      return { found: false, value: undefined };
    }
    v = (v as Record<string, unknown>)[k];
  }
  return { found: true, value: v };
}

const startsWith = (key: (string | number)[], path: string[]) =>
  key.length >= path.length && path.every((p, i) => key[i] === p);

/** The lines of `[path]` and its sub-tables when they are written as one run of tables. */
function region(text: string, ast: Program, path: string[]): [number, number] | undefined {
  const body = ast.body[0].body;
  const idx = body.flatMap((n, i) => n.type === "TOMLTable" && startsWith(n.resolvedKey, path) ? [i] : []);
  if (idx.length === 0 || idx[idx.length - 1] - idx[0] !== idx.length - 1) return undefined;
  const first = body[idx[0]] as TableNode;
  if (first.kind !== "standard" || first.resolvedKey.length !== path.length) return undefined;
  const last = body[idx[idx.length - 1]];
  const from = lineStart(text, first.range[0]);
  return [from, lineEnd(text, trimEnd(text, from, last.range[1]))];
}

export function readToml(text: string, path: string[], file = "file"): Found & { editable?: boolean } {
  const ast = parse(text, file);
  const { found, value } = valueAt(ast, path);
  if (!found) return { found: false };
  const r = region(text, ast, path);
  // Editable when the run of tables is the whole definition (no dotted keys or inline tables elsewhere).
  const editable = r !== undefined &&
    !valueAt(parse(text.slice(0, r[0]) + text.slice(r[1]), file), path).found;
  return { found: true, value, raw: r ? text.slice(r[0], r[1]) : "", editable };
}

/** Set the table at `path` to `value` (replacing the table when it is there). */
export function setToml(text: string, path: string[], value: JsonObject, file = "file"): string {
  const eol = detectEol(text);
  const ast = parse(text, file);
  const lines = renderTable(path, value);
  const current = readToml(text, path, file);
  if (current.found) {
    if (!current.editable) {
      throw new EditError(
        `${file}: ${path.join(".")} is not written as a [${path.join(".")}] table; edit it by hand`,
      );
    }
    const [from, to] = region(text, ast, path)!;
    return text.slice(0, from) + lines.join(eol) + text.slice(to);
  }
  const family = ast.body[0].body.filter((n): n is TableNode =>
    n.type === "TOMLTable" && n.resolvedKey[0] === path[0]
  );
  const last = family[family.length - 1];
  const out = last
    ? insertLines(text, lineEnd(text, trimEnd(text, 0, last.range[1])), lines, eol, true)
    : appendBlock(text, lines, eol);
  try {
    parseTOML(out, { tomlVersion: "1.0" });
  } catch {
    throw new EditError(
      `${file}: cannot add [${path.join(".")}] next to how ${path[0]} is written there; edit it by hand`,
    );
  }
  return out;
}

/** Put back `raw` (the table's text as it was) in place of the table at `path`. */
export function restoreToml(text: string, path: string[], raw: string, file = "file"): string {
  const r = region(text, parse(text, file), path);
  return r ? text.slice(0, r[0]) + raw + text.slice(r[1]) : text;
}

/** Remove the table at `path` and the blank line `setToml` put before it. */
export function removeToml(text: string, path: string[], file = "file"): string {
  const r = region(text, parse(text, file), path);
  return r ? removeLines(text, r[0], r[1], true) : text;
}

export function tomlKey(k: string): string {
  return /^[A-Za-z0-9_-]+$/.test(k) ? k : tomlString(k);
}

export function tomlString(s: string): string {
  return JSON.stringify(s).replace(/\x7f/g, "\\u007f");
}

export function tomlValue(v: Json): string {
  if (typeof v === "string") return tomlString(v);
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  if (v === null) throw new EditError("TOML has no null");
  if (Array.isArray(v)) return `[${v.map(tomlValue).join(", ")}]`;
  const entries = Object.entries(v).map(([k, x]) => `${tomlKey(k)} = ${tomlValue(x)}`);
  return entries.length ? `{ ${entries.join(", ")} }` : "{}";
}

/** `[a.b]` and one `key = value` line per entry (nested objects as inline tables). */
export function renderTable(path: string[], value: JsonObject): string[] {
  return [
    `[${path.map(tomlKey).join(".")}]`,
    ...Object.entries(value).map(([k, v]) => `${tomlKey(k)} = ${tomlValue(v)}`),
  ];
}

/** A whole TOML file of top-level keys; multi-line strings as ''' literals where they can be. */
/** Control characters other than tab and newline (a ''' literal cannot hold them). */
function hasControl(s: string): boolean {
  return [...s].some((c) => {
    const n = c.charCodeAt(0);
    return (n < 0x20 && c !== "\t" && c !== "\n") || n === 0x7f;
  });
}

export function renderTomlDoc(value: Record<string, string | number | boolean | string[]>): string {
  const lines = Object.entries(value).map(([k, v]) => {
    if (
      typeof v === "string" && v.includes("\n") && !v.includes("'''") && !hasControl(v)
    ) {
      return `${tomlKey(k)} = '''\n${v}'''`;
    }
    return `${tomlKey(k)} = ${tomlValue(v)}`;
  });
  return lines.join("\n") + "\n";
}
