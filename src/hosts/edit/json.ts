/**
 * Editing one entry of a JSON or JSONC file (`.mcp.json`, `settings.json`, `opencode.jsonc`…) in
 * place. `jsonc-parser` finds the offsets (comments and trailing commas allowed); the text is
 * spliced here, line by line, so every byte hermit does not own stays as it was — comments,
 * key order, indentation, line endings — and removing an entry is the exact inverse of adding it.
 */
import { getNodeValue, type Node, type ParseError, parseTree } from "jsonc-parser";
import {
  bomHint,
  detectEol,
  detectIndentUnit,
  EditError,
  indentAt,
  insertLines,
  lineEnd,
  lineStart,
  removeLines,
  startsLine,
} from "./lines.ts";

export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** What `set` created, so that `remove` can take it away again. */
export interface Created {
  /** Objects that did not exist before (each a key path). */
  containers: string[][];
  /** Objects that were empty on one line (`{}`), by key path joined with NUL: their inside. */
  interiors: Record<string, string>;
}

export type Found = { found: false } | { found: true; value: unknown; raw: string };

function parse(text: string, file: string): Node | undefined {
  if (text.trim() === "") return undefined;
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length || !root) throw new EditError(`${file} is not valid JSON${bomHint(text)}; fix it first`);
  if (root.type !== "object") throw new EditError(`${file} does not hold a JSON object`);
  return root;
}

export function readJson(text: string, path: string[], file = "file"): Found {
  const root = parse(text, file);
  const node = root && nodeAt(root, path);
  if (!node) return { found: false };
  return { found: true, value: getNodeValue(node), raw: text.slice(node.offset, node.offset + node.length) };
}

/** The whole document's value (undefined for a blank file). */
export function jsonValue(text: string, file = "file"): unknown {
  const root = parse(text, file);
  return root ? getNodeValue(root) : undefined;
}

/** Set `path` to `value` (adding what is missing on the way); `created` collects what was added. */
export function setJson(text: string, path: string[], value: Json, created: Created, file = "file"): string {
  const eol = detectEol(text);
  const unit = detectIndentUnit(text);
  const root = parse(text, file);
  if (!root) {
    for (let i = 1; i < path.length; i++) created.containers.push(path.slice(0, i));
    return renderJson(nest(path, value), "", unit, eol) + eol + text;
  }
  let obj = root;
  for (let i = 0; i < path.length; i++) {
    const prop = property(obj, path[i]);
    if (!prop) {
      for (let j = i + 1; j < path.length; j++) created.containers.push(path.slice(0, j));
      return insertProperty(text, obj, path.slice(0, i), path[i], nest(path.slice(i + 1), value), created);
    }
    const child = prop.children![1];
    if (i === path.length - 1) {
      const indent = indentAt(text, prop.offset);
      return splice(text, child.offset, child.length, renderJson(value, indent, unit, eol));
    }
    if (child.type !== "object") {
      const what = child.type === "null" ? "null" : child.type === "array" ? "a list" : `a ${child.type}`;
      throw new EditError(
        `${file}: ${
          path.slice(0, i + 1).join(".")
        } is ${what}, not an object; make it {} or take it out (hermit will not replace it)`,
      );
    }
    obj = child;
  }
  return text;
}

/** Put `raw` (text taken from this file before) back as the value at `path`. */
export function restoreJson(text: string, path: string[], raw: string, file = "file"): string {
  const root = parse(text, file);
  const node = root && nodeAt(root, path);
  return node ? splice(text, node.offset, node.length, raw) : text;
}

/**
 * Remove the property at `path`; `interiors` restores `{}`-style objects emptied by it (only blank
 * text, which is all `setJson` notes: anything else would be spliced into the user's file).
 */
export function removeJson(
  text: string,
  path: string[],
  interiors: Record<string, string>,
  file = "file",
): string {
  const root = parse(text, file);
  const node = root && nodeAt(root, path);
  if (!node?.parent || node.parent.type !== "property") return text;
  const prop = node.parent;
  const obj = prop.parent!;
  const props = obj.children!;
  const idx = props.indexOf(prop);
  const end = prop.offset + prop.length;
  const next = nextToken(text, end);
  const comma = text[next] === ",";
  let out: string;
  if (ownLine(text, prop.offset, comma ? next + 1 : end)) {
    const to = lineEnd(text, comma ? next + 1 : end);
    out = removeLines(text, lineStart(text, prop.offset), to, false);
    if (!comma && idx > 0) {
      const prevComma = nextToken(text, props[idx - 1].offset + props[idx - 1].length);
      if (text[prevComma] === ",") out = out.slice(0, prevComma) + out.slice(prevComma + 1);
    }
  } else if (idx > 0) {
    const prevEnd = props[idx - 1].offset + props[idx - 1].length;
    out = text.slice(0, prevEnd) + text.slice(end);
  } else if (props.length > 1) {
    out = text.slice(0, prop.offset) + text.slice(props[1].offset);
  } else {
    out = text.slice(0, prop.offset) + text.slice(comma ? next + 1 : end);
  }
  const key = path.slice(0, -1).join("\0");
  // only blank text, as hermit notes it (a record is a project's file: other text is not the file's)
  if (props.length === 1 && key in interiors && /^[ \t]*$/.test(interiors[key])) {
    const emptied = nodeAt(parse(out, file)!, path.slice(0, -1));
    if (
      emptied?.type === "object" &&
      out.slice(emptied.offset + 1, emptied.offset + emptied.length - 1).trim() === ""
    ) {
      out = splice(out, emptied.offset + 1, emptied.length - 2, interiors[key]);
    }
  }
  return out;
}

function insertProperty(
  text: string,
  obj: Node,
  objPath: string[],
  key: string,
  value: Json,
  created: Created,
): string {
  const eol = detectEol(text);
  const unit = detectIndentUnit(text);
  const props = obj.children ?? [];
  if (props.length === 0) {
    const open = obj.offset;
    const close = obj.offset + obj.length - 1;
    const inside = text.slice(open + 1, close);
    const outer = indentAt(text, open);
    const line = `${outer}${unit}${JSON.stringify(key)}: ${renderJson(value, outer + unit, unit, eol)}`;
    if (inside.trim() === "" && !inside.includes("\n")) {
      created.interiors[objPath.join("\0")] = inside;
      return text.slice(0, open + 1) + eol + line + eol + outer + text.slice(close);
    }
    return insertLines(text, lineEnd(text, open), [line], eol, false);
  }
  const last = props[props.length - 1];
  const lastEnd = last.offset + last.length;
  const next = nextToken(text, lastEnd);
  const comma = text[next] === ",";
  const after = comma ? next + 1 : lastEnd;
  if (ownLine(text, last.offset, after)) {
    const indent = indentAt(text, last.offset);
    const line = `${indent}${JSON.stringify(key)}: ${renderJson(value, indent, unit, eol)}${
      comma ? "," : ""
    }`;
    const out = insertLines(text, lineEnd(text, after), [line], eol, false);
    return comma ? out : out.slice(0, lastEnd) + "," + out.slice(lastEnd);
  }
  return splice(text, lastEnd, 0, `, ${JSON.stringify(key)}: ${compactJson(value)}`);
}

/** A property node of `obj` by key (the last one when a key repeats, as JSON.parse does). */
function property(obj: Node, key: string): Node | undefined {
  return obj.children?.findLast((p) => p.children?.[0].value === key);
}

/** The value at `path`, each key's last occurrence: what JSON.parse and the hosts read. */
function nodeAt(root: Node, path: string[]): Node | undefined {
  let node: Node | undefined = root;
  for (const key of path) {
    if (node?.type !== "object") return undefined;
    node = property(node, key)?.children?.[1];
  }
  return node;
}

/** True when the property at `start` has its line(s) to itself up to `after` (then a comment at most). */
function ownLine(text: string, start: number, after: number): boolean {
  if (!startsLine(text, start)) return false;
  const rest = text.slice(after, lineEnd(text, after)).trim();
  return rest === "" || rest.startsWith("//") || (rest.startsWith("/*") && rest.endsWith("*/"));
}

/** The offset of the next character that is not whitespace or inside a comment. */
function nextToken(text: string, pos: number): number {
  for (;;) {
    while (pos < text.length && /\s/.test(text[pos])) pos++;
    if (text.startsWith("//", pos)) pos = lineEnd(text, pos);
    else if (text.startsWith("/*", pos)) {
      const close = text.indexOf("*/", pos + 2);
      pos = close < 0 ? text.length : close + 2;
    } else return pos;
  }
}

function splice(text: string, at: number, length: number, insert: string): string {
  return text.slice(0, at) + insert + text.slice(at + length);
}

function nest(path: string[], value: Json): Json {
  return path.reduceRight<Json>((v, k) => ({ [k]: v }), value);
}

/** Objects one key a line; arrays of plain values on one line. `indent` is the current line's. */
export function renderJson(value: Json, indent: string, unit: string, eol: string): string {
  if (Array.isArray(value)) {
    if (value.every((v) => v === null || typeof v !== "object")) return compactJson(value);
    const inner = indent + unit;
    return `[${eol}${
      value.map((v) => inner + renderJson(v, inner, unit, eol)).join("," + eol)
    }${eol}${indent}]`;
  }
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value);
    if (keys.length === 0) return "{}";
    const inner = indent + unit;
    const lines = keys.map((k) => `${inner}${JSON.stringify(k)}: ${renderJson(value[k], inner, unit, eol)}`);
    return `{${eol}${lines.join("," + eol)}${eol}${indent}}`;
  }
  return JSON.stringify(value);
}

export function compactJson(value: Json): string {
  if (Array.isArray(value)) return `[${value.map(compactJson).join(", ")}]`;
  if (value !== null && typeof value === "object") {
    return `{ ${
      Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${compactJson(v)}`).join(", ")
    } }`;
  }
  return JSON.stringify(value);
}
