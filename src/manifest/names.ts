/**
 * Pure name rules shared by `check` and the gateway: fnmatch-style globs (case-sensitive, like
 * Python's fnmatchcase), the include/exclude tool filter (include wins; filters see the server's
 * raw names) and the raw → exported name mapping (`rename:` first, then `prefix:`).
 */

const globCache = new Map<string, RegExp>();

export function isGlob(pattern: string): boolean {
  return /[*?[]/.test(pattern);
}

/** fnmatchcase: `*` any run, `?` one character, `[abc]`/`[!abc]`/`[a-z]` a class. */
export function fnmatch(name: string, pattern: string): boolean {
  let re = globCache.get(pattern);
  if (!re) {
    re = new RegExp("^" + globToRegex(pattern) + "$", "s");
    globCache.set(pattern, re);
  }
  return re.test(name);
}

function globToRegex(pattern: string): string {
  let out = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "*") out += ".*";
    else if (c === "?") out += ".";
    else if (c === "[") {
      const end = pattern.indexOf("]", i + 2);
      if (end === -1) {
        out += "\\[";
        continue;
      }
      let body = pattern.slice(i + 1, end);
      const negate = body.startsWith("!");
      if (negate) body = body.slice(1);
      body = body.replace(/[\\\]^]/g, (m) => "\\" + m);
      out += `[${negate ? "^" : ""}${body}]`;
      i = end;
    } else out += c.replace(/[.+^${}()|\\/]/g, (m) => "\\" + m);
  }
  return out;
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
  return mapping.rename[rawName] ?? mapping.prefix + rawName;
}

/** The tool name a host sees: `mcp__<server>__<tool>`, the form Claude Code, Codex and Pi use. */
export function hostToolName(adapter: string, tool: string): string {
  const clean = (s: string) => s.replace(/[^A-Za-z0-9_]/g, "_");
  return `mcp__${clean(adapter)}__${clean(tool)}`;
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
