/**
 * Pure name rules shared by `check` and the gateway: fnmatch-style globs (case-sensitive, like
 * Python's fnmatchcase), the include/exclude tool filter (include wins; filters see the server's
 * raw names), the raw → exported name mapping (`rename:` first, then `prefix:`), which sources
 * can provide an exported name, and "did you mean" suggestions.
 */
import type { Manifest, Upstream } from "./types.ts";

const globCache = new Map<string, RegExp>();

export function isGlob(pattern: string): boolean {
  return /[*?[]/.test(pattern);
}

/**
 * fnmatchcase: `*` any run, `?` one character, `[abc]`/`[!abc]`/`[a-z]` a class, everything else
 * literal. A port of CPython's `fnmatch.translate`, code point by code point: an unclosed `[` is
 * literal, `]` first in a class is literal, a reversed range like `[z-a]` matches nothing.
 */
export function fnmatch(name: string, pattern: string): boolean {
  let re = globCache.get(pattern);
  if (!re) {
    re = new RegExp("^(?:" + globToRegex(pattern) + ")$", "su");
    globCache.set(pattern, re);
  }
  return re.test(name);
}

const escapeOutside = (c: string) => c.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");
const escapeInClass = (s: string) => s.replace(/[\\\][^-]/g, "\\$&");

function globToRegex(pattern: string): string {
  const p = Array.from(pattern); // code points, as Python indexes strings
  const n = p.length;
  let out = "";
  let star = false; // `**` is one star
  let i = 0;
  while (i < n) {
    const c = p[i++];
    const wasStar = star;
    star = c === "*";
    if (c === "*") {
      if (!wasStar) out += ".*";
    } else if (c === "?") out += ".";
    else if (c !== "[") out += escapeOutside(c);
    else {
      let j = i;
      if (j < n && p[j] === "!") j++;
      if (j < n && p[j] === "]") j++;
      while (j < n && p[j] !== "]") j++;
      if (j >= n) {
        out += "\\[";
        continue;
      }
      out += classToRegex(p.slice(i, j));
      i = j + 1;
    }
  }
  return out;
}

/** The inside of `[...]` (without the brackets), as CPython turns it into a regex class. */
function classToRegex(body: string[]): string {
  const negate = body[0] === "!";
  const start = negate ? 1 : 0;
  // Split on the hyphens that make ranges: a hyphen right after the start (or after a range) is literal.
  const chunks: string[][] = [];
  let from = 0;
  let k = start + 1;
  for (;;) {
    k = body.indexOf("-", k);
    if (k < 0) break;
    chunks.push(body.slice(from, k));
    from = k + 1;
    k = k + 3;
  }
  const last = body.slice(from);
  if (chunks.length === 0 || last.length > 0) chunks.push(last);
  else chunks[chunks.length - 1].push("-");
  // Remove empty (reversed) ranges: invalid in a regex, matching nothing in fnmatch.
  for (let m = chunks.length - 1; m > 0; m--) {
    const prev = chunks[m - 1];
    if (prev[prev.length - 1].codePointAt(0)! > chunks[m][0].codePointAt(0)!) {
      chunks[m - 1] = [...prev.slice(0, -1), ...chunks[m].slice(1)];
      chunks.splice(m, 1);
    }
  }
  const joined = chunks.map((ch) => ch.join(""));
  let stuff = joined.map((
    s,
    idx,
  ) => (idx === 0 && negate ? "!" + escapeInClass(s.slice(1)) : escapeInClass(s)))
    .join("-");
  if (stuff === "") return "(?!)";
  if (stuff === "!") return ".";
  if (negate) stuff = "^" + stuff.slice(1);
  return `[${stuff}]`;
}

/** Exact membership first, then globs, as Hermes's `matches_name_filter`. */
export function matchesAny(name: string, patterns: readonly string[]): boolean {
  if (patterns.includes(name)) return true;
  return patterns.some((p) => isGlob(p) && fnmatch(name, p));
}

export interface ToolFilter {
  /** When set, only matches are kept (`[]` keeps none). */
  include?: readonly string[];
  exclude: readonly string[];
}

/** Include wins: with an include list, exclude is not consulted. */
export function passesFilter(rawName: string, filter: ToolFilter): boolean {
  if (filter.include !== undefined) return matchesAny(rawName, filter.include);
  return !matchesAny(rawName, filter.exclude);
}

export interface NameMapping {
  rename: Readonly<Record<string, string>>;
  prefix: string;
}

export function exportedName(rawName: string, mapping: NameMapping): string {
  return Object.hasOwn(mapping.rename, rawName) ? mapping.rename[rawName] : mapping.prefix + rawName;
}

/** The tool name a host sees: `mcp__<server>__<tool>`, the form Claude Code, Codex and Pi use. */
export function hostToolName(adapter: string, tool: string): string {
  const clean = (s: string) => s.replace(/[^A-Za-z0-9_]/g, "_");
  return `mcp__${clean(adapter)}__${clean(tool)}`;
}

/** Where an exported tool comes from, as far as the manifest alone can tell. */
export type ToolSource =
  | { kind: "command" }
  | { kind: "upstream"; server: string; raw: string; certain: boolean };

export function exportSources(m: Manifest): Map<string, ToolSource[]> {
  const out = new Map<string, ToolSource[]>();
  for (const name of m.exports.tools) {
    const sources: ToolSource[] = [];
    if (Object.hasOwn(m.tools, name)) sources.push({ kind: "command" });
    for (const u of Object.values(m.upstreams)) {
      const claim = upstreamClaim(u, name);
      if (claim) sources.push(claim);
    }
    out.set(name, sources);
  }
  return out;
}

/** Does upstream `u` (by its filter, rename and prefix) provide the exported name `name`? */
function upstreamClaim(u: Upstream, name: string): ToolSource | undefined {
  const renamedFrom = Object.entries(u.rename).find(([, to]) => to === name)?.[0];
  const candidates = renamedFrom !== undefined ? [renamedFrom] : [];
  if (name.startsWith(u.prefix)) {
    const raw = name.slice(u.prefix.length);
    if (raw && exportedName(raw, u) === name) candidates.push(raw);
  }
  for (const raw of candidates) {
    if (u.include !== undefined) {
      if (u.include.includes(raw)) return { kind: "upstream", server: u.name, raw, certain: true };
      if (matchesAny(raw, u.include)) return { kind: "upstream", server: u.name, raw, certain: false };
    } else if (passesFilter(raw, { exclude: u.exclude })) {
      return { kind: "upstream", server: u.name, raw, certain: false };
    }
  }
  return undefined;
}

/** Levenshtein distance, for "did you mean" suggestions. */
export function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length];
}

export function suggest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const d = editDistance(word.toLowerCase(), c.toLowerCase());
    if (d < bestD) [best, bestD] = [c, d];
  }
  return best !== undefined && bestD <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}
