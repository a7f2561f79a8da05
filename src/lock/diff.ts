/**
 * A tool definition as a person reads it in a terminal or a CI log, whole, since what `hermit
 * lock` prints is what it writes: a changed one as text fields in a word diff
 * (`[-removed-]{+added+}`) and schemas and annotations as the key paths added, removed or changed
 * with their old and new values; an added one as every value it holds, one line per leaf, by key
 * path. Keys that could read as another path are quoted (`properties."file.path"`); hidden and
 * control characters are shown as `<U+XXXX>`, never raw; a value is shown whole up to a large cap,
 * past which the line says how much more the lock holds. Pure.
 */
import { diffWords } from "diff";
import { escapeUnseen } from "../gates/approval_text.ts";
import { own } from "../platform/own.ts";
import { canonicalJson, DEFINITION_FIELDS, type ToolDefinition } from "./definition.ts";
import { keyChanges, type KeyPath, showPath } from "./verdict.ts";

/** Characters of one value shown; a longer one says how many more are not (they are in hermit.lock). */
export const VALUE_MAX = 2_000;

/** Lines (without indentation) showing how `before` became `after`. */
export function definitionDiff(before: ToolDefinition, after: ToolDefinition): string[] {
  const out: string[] = [];
  const b = before as unknown as Record<string, unknown>;
  const a = after as unknown as Record<string, unknown>;
  for (const field of DEFINITION_FIELDS) {
    if (canonicalJson(b[field]) === canonicalJson(a[field])) continue;
    if (typeof b[field] === "string" || typeof a[field] === "string") {
      out.push(`${field}: ${wordDiff(text(b[field]), text(a[field]))}`);
      continue;
    }
    const { added, removed, changed } = keyChanges(b[field], a[field]);
    out.push(`${field}:`);
    for (const p of added) out.push(`  + ${showPath(p)}: ${value(at(a[field], p))}`);
    for (const p of removed) out.push(`  - ${showPath(p)}: ${value(at(b[field], p))}`);
    for (const p of changed) {
      out.push(`  ~ ${showPath(p)}: ${value(at(b[field], p))} → ${value(at(a[field], p))}`);
    }
  }
  return out;
}

/**
 * An added tool, whole (lines without indentation): its title and description, then every value
 * of its input and output schemas and annotations under the field, one line per leaf by key path
 * (array elements as `[i]`; an array of plain values on one line), in the lock's key order.
 */
export function definitionLines(def: ToolDefinition): string[] {
  const d = def as unknown as Record<string, unknown>;
  const out: string[] = [];
  for (const field of DEFINITION_FIELDS) {
    const v = d[field];
    if (field === "name" || v === undefined) continue;
    const all = leaves(v, []);
    if (all.length === 1 && all[0][0].length === 0) {
      out.push(`${field}: ${value(v)}`);
      continue;
    }
    out.push(`${field}:`);
    for (const [p, leaf] of all) out.push(`  ${showPath(p)}: ${value(leaf)}`);
  }
  return out;
}

export function wordDiff(before: string, after: string): string {
  return diffWords(before, after).map((p) =>
    p.added ? `{+${shownText(p.value)}+}` : p.removed ? `[-${shownText(p.value)}-]` : shownText(p.value)
  ).join("");
}

/** Prose on one line: runs of plain white space as one space, everything unseen escaped. */
function shownText(s: string): string {
  return escapeUnseen(s.replace(/[ \t\n\r]+/g, " "));
}

function text(v: unknown): string {
  return typeof v === "string" ? v : v === undefined ? "" : canonicalJson(v);
}

function at(root: unknown, p: KeyPath): unknown {
  let v = root;
  for (const k of p) v = isObject(v) ? own(v, k) : undefined;
  return v;
}

type LeafPath = (string | number)[];

/** Every leaf of `v` with its path: objects by sorted key, arrays by index unless all plain. */
function leaves(v: unknown, path: LeafPath): [LeafPath, unknown][] {
  if (isObject(v)) {
    const keys = Object.keys(v).sort();
    if (!keys.length) return [[path, v]];
    return keys.flatMap((k) => leaves(v[k], [...path, k]));
  }
  if (Array.isArray(v) && v.some((e) => e !== null && typeof e === "object")) {
    return v.flatMap((e, i) => leaves(e, [...path, i]));
  }
  return [[path, v]];
}

function isObject(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === "object" && !Array.isArray(v);
}

/** A value as JSON, unseen characters escaped, cut past `VALUE_MAX` characters saying so. */
function value(v: unknown): string {
  const chars = Array.from(escapeUnseen(canonicalJson(v)));
  if (chars.length <= VALUE_MAX) return chars.join("");
  const more = chars.length - VALUE_MAX;
  return `${chars.slice(0, VALUE_MAX).join("")}… ${more} more characters not shown; see hermit.lock`;
}
