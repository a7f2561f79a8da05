/**
 * The packages uv installs beside the tool it runs (`uvx --with a,b`, `-w a`, `uv tool run --with
 * …`): each requirement of each `--with` (a comma joins requirements, and the clauses of one
 * version specifier: `a>=1,<2`), the name and version it asks for, or why hermit cannot pin it (a
 * URL, a path, a marker); the options that add packages hermit cannot read at all
 * (`--with-editable`, `--with-requirements`); and the pin at spawn: each one that names no exact
 * version rewritten to `name==version` from the lock's `with`. Pure.
 */
import { exactVersion, parsePythonSpec } from "./packages.ts";
import type { Spec } from "./runner_options.ts";

/** One requirement of a `--with`. */
export interface ExtraPackage {
  text: string;
  /** The distribution's name (no extras), when it can be pinned. */
  name?: string;
  /** The name as written, extras kept (`pkg[cli]`), which the pin keeps. */
  written?: string;
  exact?: boolean;
  /** Why it cannot be pinned. */
  why?: string;
}

export interface ExtraOption extends Spec {
  packages: ExtraPackage[];
}

/** The options that add packages hermit cannot read: a local project, a requirements file. */
const UNREAD = ["--with-editable", "--with-requirements"];

/** uv's `--with` value, one requirement each (a comma before an operator joins a specifier's clauses). */
export function splitWith(value: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = "";
  for (const c of value) {
    if (c === "[") depth++;
    else if (c === "]") depth--;
    if (c === "," && depth <= 0) {
      parts.push(current);
      current = "";
    } else current += c;
  }
  parts.push(current);
  const out: string[] = [];
  for (const p of parts) {
    if (out.length && /^\s*[<>=!~]/.test(p)) out[out.length - 1] += `,${p}`;
    else out.push(p);
  }
  return out.map((p) => p.trim()).filter(Boolean);
}

export function extraPackage(text: string): ExtraPackage {
  if (text.includes("@") || text.includes(";")) {
    return { text, why: `'${text}' is a direct reference or has a marker, which hermit does not pin` };
  }
  const parsed = parsePythonSpec(text);
  if ("why" in parsed) return { text, why: parsed.why };
  const exact = parsed.requested !== undefined && /==\s*[^=]/.test(text) && !text.includes(",") &&
    exactVersion("uvx", parsed.requested);
  return { text, name: parsed.name.replace(/\[.*$/, ""), written: parsed.name, exact };
}

export function extraOptions(specs: readonly Spec[]): ExtraOption[] {
  return specs.map((s) => ({ ...s, packages: splitWith(s.spec).map(extraPackage) }));
}

/** The options before the package that add packages hermit cannot read (`--with-requirements`). */
export function unreadExtras(args: readonly string[], from: number, to: number): string[] {
  return args.slice(from, to).map((a) => a.split("=")[0]).filter((a) => UNREAD.includes(a));
}

/** PyPI's comparison of names: case, and runs of `-_.`, do not matter. */
export function pypiKey(name: string): string {
  return name.replace(/\[.*$/, "").toLowerCase().replace(/[-_.]+/g, "-");
}

/** The version `locked` holds for `name`, if it holds one. */
export function lockedExtra(locked: Record<string, string> | undefined, name: string): string | undefined {
  const key = pypiKey(name);
  return Object.entries(locked ?? {}).find(([n]) => pypiKey(n) === key)?.[1];
}

/** `out` with each `--with` requirement that names no exact version pinned to the lock's. */
export function pinExtras(
  out: string[],
  extras: readonly ExtraOption[],
  locked: Record<string, string> | undefined,
): void {
  if (!locked) return;
  for (const e of extras) {
    const texts = e.packages.map((p) => {
      const version = p.name && !p.exact ? lockedExtra(locked, p.name) : undefined;
      return version ? `${p.written}==${version}` : p.text;
    });
    if (texts.some((t, k) => t !== e.packages[k].text)) out[e.index] = e.prefix + texts.join(",");
  }
}
