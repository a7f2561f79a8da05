/**
 * Editing one entry of a YAML file (Hermes's `config.yaml`) in place. The `yaml` package's
 * Document API finds the offsets; the text is spliced here a whole line block at a time, so
 * comments, quoting, flow styles and key order elsewhere stay byte for byte, and removing an entry
 * is the exact inverse of adding it. Block mappings only: a flow mapping (`{…}`) with entries is
 * left to the user.
 */
import { isMap, isScalar, isSeq, type Node, type Pair, parseDocument, stringify, type YAMLMap } from "yaml";
import type { Created, Found, Json, JsonObject } from "./json.ts";
import {
  appendBlock,
  detectEol,
  detectIndentUnit,
  EditError,
  indentAt,
  insertLines,
  lineEnd,
  lineStart,
  removeLines,
  trimEnd,
} from "./lines.ts";

function parse(text: string, file: string): YAMLMap | undefined {
  const doc = parseDocument(text, { keepSourceTokens: false });
  if (doc.errors.length) {
    throw new EditError(`${file} is not valid YAML (${doc.errors[0].message.split("\n")[0]})`);
  }
  if (doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null)) return undefined;
  if (!isMap(doc.contents)) throw new EditError(`${file} does not hold a YAML mapping`);
  return doc.contents;
}

const BLOCK = "write it as a block mapping first";

function pairOf(map: YAMLMap, key: string): Pair<Node, Node | null> | undefined {
  return (map.items as Pair<Node, Node | null>[]).findLast((p) =>
    isScalar(p.key) && String(p.key.value) === key
  );
}

/** The lines a pair takes: from its key's line start to the end of its value's last line. */
function region(text: string, pair: Pair<Node, Node | null>): [number, number] {
  const start = lineStart(text, pair.key.range![0]);
  const valueEnd = pair.value?.range ? pair.value.range[1] : pair.key.range![1];
  return [start, lineEnd(text, trimEnd(text, start, valueEnd))];
}

function walk(text: string, path: string[], file: string) {
  let map = parse(text, file);
  const pairs: Pair<Node, Node | null>[] = [];
  for (let i = 0; map && i < path.length; i++) {
    const pair = pairOf(map, path[i]);
    if (!pair) return { pairs, map, depth: i };
    pairs.push(pair);
    if (i === path.length - 1) break;
    if (pair.value !== null && !isMap(pair.value) && !(isScalar(pair.value) && pair.value.value === null)) {
      throw new EditError(
        `${file}: ${
          path.slice(0, i + 1).join(".")
        } is not a mapping; make it {} or take it out (hermit will not replace it)`,
      );
    }
    map = isMap(pair.value) ? pair.value : undefined;
  }
  return { pairs, map, depth: pairs.length };
}

/** The pair at `path`; editable when it has lines of its own (not inside a flow mapping `{…}`). */
export function readYaml(text: string, path: string[], file = "file"): Found & { editable?: boolean } {
  const { pairs, map } = walk(text, path, file);
  if (pairs.length < path.length) return { found: false };
  const pair = pairs[pairs.length - 1];
  const [from, to] = region(text, pair);
  const value = pair.value ? pair.value.toJSON() : null;
  return { found: true, value, raw: text.slice(from, to), editable: !map?.flow };
}

/**
 * Set `path` to `value`. `created.containers` collects the mappings that had to be added;
 * `created.interiors` the text of an empty flow mapping (`key: {}`) or a written null (`key: ~`)
 * turned into a block, so that `removeYaml` can give it back.
 */
export function setYaml(text: string, path: string[], value: Json, created: Created, file = "file"): string {
  const eol = detectEol(text);
  const unit = detectIndentUnit(text);
  const { pairs, map, depth } = walk(text, path, file);
  const missing = path.slice(depth);
  for (let j = depth + 1; j < path.length; j++) created.containers.push(path.slice(0, j));
  if (missing.length === 0) {
    if (map?.flow) throw new EditError(`${file}: ${path.join(".")} is in a flow mapping ({…}); ${BLOCK}`);
    const pair = pairs[pairs.length - 1];
    const [from, to] = region(text, pair);
    const indent = indentAt(text, pair.key.range![0]);
    return text.slice(0, from) + renderPair(path[path.length - 1], value, indent, unit, eol) + text.slice(to);
  }
  const nested = missing.slice(1).reduceRight<Json>((v, k) => ({ [k]: v }), value);
  if (depth === 0) return appendBlock(text, renderPair(missing[0], nested, "", unit, eol).split(eol), eol);
  const parent = pairs[depth - 1];
  const parentIndent = indentAt(text, parent.key.range![0]);
  const items = (map?.items ?? []) as Pair<Node, Node | null>[];
  if (map?.flow && items.length) {
    throw new EditError(`${file}: ${path.slice(0, depth).join(".")} is a flow mapping ({…}); ${BLOCK}`);
  }
  if (map?.flow || writtenNull(parent.value)) {
    const [from, to] = region(text, parent);
    created.interiors[path.slice(0, depth).join("\0")] = text.slice(from, to);
    const body = renderPair(missing[0], nested, parentIndent + unit, unit, eol);
    return text.slice(0, from) + `${parentIndent}${keyText(path[depth - 1])}:` + eol + body + text.slice(to);
  }
  if (items.length) {
    const last = items[items.length - 1];
    const lines = renderPair(missing[0], nested, indentAt(text, last.key.range![0]), unit, eol).split(eol);
    return insertLines(text, region(text, last)[1], lines, eol, false);
  }
  const lines = renderPair(missing[0], nested, parentIndent + unit, unit, eol).split(eol);
  return insertLines(text, lineEnd(text, parent.key.range![0]), lines, eol, false);
}

/** A value written as null (`~`, `null`): lines under its key would not parse; `key:` alone is null too. */
function writtenNull(value: Node | null): boolean {
  return isScalar(value) && value.value === null && value.range![1] > value.range![0];
}

/** Put back `raw`, the pair's text as it was, in place of the pair at `path`. */
export function restoreYaml(text: string, path: string[], raw: string, file = "file"): string {
  const { pairs, map } = walk(text, path, file);
  if (pairs.length < path.length || map?.flow) return text; // its line holds others' pairs too
  const [from, to] = region(text, pairs[pairs.length - 1]);
  return text.slice(0, from) + raw + text.slice(to);
}

/**
 * Remove the pair at `path`: a top-level pair goes with the blank line `setYaml` put before it, and
 * a mapping emptied by it gets back the `{}` (or `~`) text recorded in `interiors` (when that text
 * is the same key's empty value).
 */
export function removeYaml(
  text: string,
  path: string[],
  interiors: Record<string, string>,
  file = "file",
): string {
  const { pairs, map } = walk(text, path, file);
  if (pairs.length < path.length || map?.flow) return text; // its line holds others' pairs too
  const [from, to] = region(text, pairs[pairs.length - 1]);
  let out = removeLines(text, from, to, path.length === 1);
  const parentKey = path.slice(0, -1).join("\0");
  if (path.length > 1 && parentKey in interiors && yamlEmpty(out, path.slice(0, -1), file)) {
    const restored = restoreYaml(out, path.slice(0, -1), interiors[parentKey], file);
    if (onlyEmptied(out, restored, path.slice(0, -1))) out = restored;
  }
  return out;
}

/**
 * True when `after` holds what `before` holds with the mapping at `path` written `{}` or null (`~`):
 * an interior from a record (a project's file) that is anything but that key's empty value is not
 * put back.
 */
function onlyEmptied(before: string, after: string, path: string[]): boolean {
  const doc = parseDocument(after);
  if (doc.errors.length) return false;
  const want = parseDocument(before);
  want.setIn(path, doc.getIn(path) === null ? null : want.createNode({}));
  return JSON.stringify(doc.toJS()) === JSON.stringify(want.toJS());
}

/** True when the mapping at `path` is there and holds nothing. */
export function yamlEmpty(text: string, path: string[], file = "file"): boolean {
  const found = readYaml(text, path, file);
  return found.found &&
    (found.value === null ||
      (typeof found.value === "object" && Object.keys(found.value as object).length === 0));
}

function keyText(key: string): string {
  return stringify(key).trimEnd();
}

/** `key:` and the value as a block, every line indented by `indent`. */
export function renderPair(key: string, value: Json, indent: string, unit: string, eol: string): string {
  const isObject = value !== null && typeof value === "object" && !Array.isArray(value);
  if (!isObject || Object.keys(value as JsonObject).length === 0) {
    return `${indent}${keyText(key)}: ${stringify(value, { collectionStyle: "flow" }).trimEnd()}`;
  }
  const body = stringify(value, { indent: unit === "\t" ? 2 : unit.length, lineWidth: 0 }).trimEnd();
  return [`${indent}${keyText(key)}:`, ...body.split("\n").map((l) => indent + unit + l)].join(eol);
}

/**
 * Append `values` to the sequence at `path` in place: into a flow sequence (`[a, b]`) before its
 * `]`, under a block sequence as `- value` lines indented like its items; a missing or empty
 * value becomes a flow sequence. Everything else in the file stays byte for byte.
 */
export function appendYamlSeq(text: string, path: string[], values: string[], file = "file"): string {
  if (values.length === 0) return text;
  const { pairs } = walk(text, path, file);
  const pair = pairs.length === path.length ? pairs[pairs.length - 1] : undefined;
  const seq = pair?.value;
  if (!pair || seq === null || seq === undefined || (isScalar(seq) && seq.value === null)) {
    return setYaml(text, path, values, { containers: [], interiors: {} }, file);
  }
  if (!isSeq(seq)) {
    throw new EditError(`${file}: ${path.join(".")} is not a list; hermit will not replace it`);
  }
  if (seq.flow) {
    const close = text.lastIndexOf("]", seq.range![1]);
    let at = close;
    while (at > seq.range![0] + 1 && /\s/.test(text[at - 1])) at--;
    const comma = seq.items.length && text[at - 1] !== "," ? ", " : seq.items.length ? " " : "";
    return text.slice(0, at) + comma + values.map((v) => stringify(v).trimEnd()).join(", ") + text.slice(at);
  }
  const last = seq.items[seq.items.length - 1] as Node;
  const dash = text.lastIndexOf("-", last.range![0] - 1);
  const indent = indentAt(text, dash);
  const end = lineEnd(text, trimEnd(text, dash, last.range![1]));
  const eol = detectEol(text);
  return insertLines(text, end, values.map((v) => `${indent}- ${stringify(v).trimEnd()}`), eol, false);
}
