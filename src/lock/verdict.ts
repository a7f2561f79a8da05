/**
 * Gate 9, the lock verdict: given what `hermit.lock` says and the definitions an upstream offers
 * right now, which tools are served and which are withheld, and why. A tool is served when there
 * is no lock at all (as before locks existed) or when its definition hashes to its lock entry; it
 * is withheld when its definition changed, when the lock has no entry for it, or when the lock
 * cannot be read (fail closed). Pure, and free of the MCP SDK and zod: the gateway's catalog and
 * the relay's warm answers both call it.
 */
import { escapeUnseen } from "../gates/approval_text.ts";
import { visible } from "../gates/scan.ts";
import { own } from "../platform/own.ts";
import {
  canonicalJson,
  DEFINITION_FIELDS,
  type DefinitionField,
  definitionOf,
  hashDefinition,
  type ToolDefinition,
} from "./definition.ts";
import type { LockState } from "./types.ts";

/** An upstream tool as the catalog knows it: its own name, the name hosts see, its definition. */
export interface LiveTool {
  raw: string;
  exported: string;
  tool: { name: string } & Record<string, unknown>;
}

/** What changed in one field: words for text, key paths (as `showPath` shows them) for schemas and annotations. */
export interface FieldChange {
  field: DefinitionField;
  addedWords?: string[];
  removedWords?: string[];
  added?: string[];
  removed?: string[];
  changed?: string[];
}

export interface Withheld {
  server: string;
  raw: string;
  exported: string;
  why: "changed" | "new" | "invalid-lock";
  changes: FieldChange[];
  /** One line for hosts (a refused call) and logs: names fields and counts, never upstream text. */
  line: string;
  /** The same for people (logs, check): key paths and the words added or removed. */
  detail: string;
}

/** Undefined: serve it. Otherwise why it is withheld. `acceptWith` is the command that accepts it. */
export function judgeTool(
  state: LockState,
  server: string,
  t: LiveTool,
  acceptWith: string,
): Withheld | undefined {
  if (state.kind === "none") return undefined;
  const base = { server, raw: t.raw, exported: t.exported, changes: [] as FieldChange[] };
  const who = `tool '${t.exported}' (mcp_servers.${server}${t.raw !== t.exported ? ` '${t.raw}'` : ""})`;
  if (state.kind === "invalid") {
    const line =
      `${who} is not served: hermit.lock cannot be used (${state.why}); fix it or rewrite it with '${acceptWith}'`;
    return { ...base, why: "invalid-lock", line, detail: line };
  }
  const locked = own(own(state.lock.servers, server)?.tools, t.raw);
  if (!locked) {
    const line = `${who} is not in hermit.lock; review it and accept it with '${acceptWith}'`;
    return { ...base, why: "new", line, detail: line };
  }
  const live = definitionOf(t.tool);
  if (hashDefinition(live) === locked.sha256) return undefined;
  const changes = definitionChanges(locked.definition, live);
  const tail = `; not served until accepted: review and accept it with '${acceptWith}'`;
  return {
    ...base,
    why: "changed",
    changes,
    line: `${who} changed since hermit.lock: ${changes.map(countLine).join("; ") || "definition"}${tail}`,
    detail: `${who} changed since hermit.lock: ${changes.map(detailLine).join("; ") || "definition"}${tail}`,
  };
}

/** Every upstream's tools judged at once: which are served, which withheld. */
export function lockVerdict(
  state: LockState,
  upstreams: readonly { server: string; tools: readonly LiveTool[] }[],
  acceptWith: string,
): { served: { server: string; raw: string; exported: string }[]; withheld: Withheld[] } {
  const served: { server: string; raw: string; exported: string }[] = [];
  const withheld: Withheld[] = [];
  for (const u of upstreams) {
    for (const t of u.tools) {
      const w = judgeTool(state, u.server, t, acceptWith);
      if (w) withheld.push(w);
      else served.push({ server: u.server, raw: t.raw, exported: t.exported });
    }
  }
  return { served, withheld };
}

/** Field by field, what differs between a locked definition and a live one. */
export function definitionChanges(before: ToolDefinition, after: ToolDefinition): FieldChange[] {
  const out: FieldChange[] = [];
  const b = before as unknown as Record<string, unknown>;
  const a = after as unknown as Record<string, unknown>;
  for (const field of DEFINITION_FIELDS) {
    if (canonicalJson(b[field]) === canonicalJson(a[field])) continue;
    if (typeof b[field] === "string" || typeof a[field] === "string" || field === "name") {
      const was = words(b[field]);
      const now = words(a[field]);
      out.push({ field, addedWords: minus(now, was), removedWords: minus(was, now) });
    } else {
      const { added, removed, changed } = keyChanges(b[field], a[field]);
      out.push({
        field,
        added: added.map(showPath),
        removed: removed.map(showPath),
        changed: changed.map(showPath),
      });
    }
  }
  return out;
}

/** A path into a JSON value, one key per step: a key may hold ".", so it is never split on one. */
export type KeyPath = readonly string[];

/** Key paths added, removed and changed between two JSON values (objects compared key by key). */
export function keyChanges(
  before: unknown,
  after: unknown,
  path: KeyPath = [],
): { added: KeyPath[]; removed: KeyPath[]; changed: KeyPath[] } {
  const out = { added: [] as KeyPath[], removed: [] as KeyPath[], changed: [] as KeyPath[] };
  const isObj = (v: unknown): v is Record<string, unknown> =>
    !!v && typeof v === "object" && !Array.isArray(v);
  if (isObj(before) && isObj(after)) {
    for (const k of [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()) {
      const p = [...path, k];
      if (!Object.hasOwn(before, k)) out.added.push(p);
      else if (!Object.hasOwn(after, k)) out.removed.push(p);
      else {
        const sub = keyChanges(before[k], after[k], p);
        out.added.push(...sub.added);
        out.removed.push(...sub.removed);
        out.changed.push(...sub.changed);
      }
    }
  } else if (canonicalJson(before) !== canonicalJson(after)) {
    if (before === undefined) out.added.push(path);
    else if (after === undefined) out.removed.push(path);
    else out.changed.push(path);
  }
  return out;
}

/** A key that reads as itself unquoted; any other is quoted, so no two paths read alike. */
const PLAIN_KEY = /^[A-Za-z0-9_$-]+$/;

/**
 * A key path as people read it: keys joined by ".", each quoted (JSON, hidden characters as
 * `<U+XXXX>`) unless it is plain, so `properties."file.path"` is one key and not two; array
 * indices as `[i]`; `(all)` for the whole value.
 */
export function showPath(path: readonly (string | number)[]): string {
  if (!path.length) return "(all)";
  return path.map((k, i) =>
    typeof k === "number"
      ? `[${k}]`
      : `${i ? "." : ""}${PLAIN_KEY.test(k) ? k : escapeUnseen(JSON.stringify(k))}`
  ).join("");
}

function words(v: unknown): string[] {
  return typeof v === "string" ? v.split(/\s+/).filter(Boolean) : v === undefined ? [] : [canonicalJson(v)];
}

/** The words of `a` not matched by a word of `b` (as multisets), in `a`'s order. */
function minus(a: string[], b: string[]): string[] {
  const left = new Map<string, number>();
  for (const w of b) left.set(w, (left.get(w) ?? 0) + 1);
  return a.filter((w) => {
    const n = left.get(w) ?? 0;
    if (n > 0) left.set(w, n - 1);
    return n === 0;
  });
}

function countLine(c: FieldChange): string {
  if (c.addedWords || c.removedWords) {
    return `${c.field} (+${c.addedWords?.length ?? 0} words, -${c.removedWords?.length ?? 0})`;
  }
  const n = (l?: string[]) => l?.length ?? 0;
  return `${c.field} (${n(c.added)} keys added, ${n(c.removed)} removed, ${n(c.changed)} changed)`;
}

const EXCERPT = 80;

function quoteWords(ws: string[]): string {
  const s = visible(ws.join(" "));
  return JSON.stringify(s.length > EXCERPT ? s.slice(0, EXCERPT) + "…" : s);
}

function detailLine(c: FieldChange): string {
  if (c.addedWords || c.removedWords) {
    const parts = [
      ...(c.addedWords?.length ? [`+${quoteWords(c.addedWords)}`] : []),
      ...(c.removedWords?.length ? [`-${quoteWords(c.removedWords)}`] : []),
    ];
    return `${c.field} ${parts.join(" ") || "(whitespace)"}`;
  }
  const keys = (sign: string, l?: string[]) => (l ?? []).map((p) => `${sign}${p}`);
  return `${c.field} ${[...keys("+", c.added), ...keys("-", c.removed), ...keys("~", c.changed)].join(" ")}`;
}
