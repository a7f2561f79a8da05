/**
 * `${VAR}`, `${env:VAR}` and the context variables (`${userHome}`, `${workspaceFolder}`,
 * `${workspaceFolderBasename}`, `${pathSeparator}`, `${/}`), as Hermes does them: applied to every
 * string of an entry, case-sensitive, and an unset variable keeps its literal placeholder.
 * Interpolation happens when something is spawned or connected, never in files hermit writes.
 */
import path from "node:path";
import { homeDir } from "../platform/paths.ts";

const PATTERN = /\$\{([^}]+)\}/g;

export interface InterpolationContext {
  env: Readonly<Record<string, string | undefined>>;
  /** The host's project: `HERMIT_WORKSPACE`, else the working directory hermit started in. */
  workspaceFolder: string;
  userHome?: string;
}

export interface Interpolated<T> {
  value: T;
  /** Names that were referenced but are not set (their placeholders were kept). */
  unresolved: string[];
}

export function contextFrom(
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
): InterpolationContext {
  return { env, workspaceFolder: env.HERMIT_WORKSPACE || cwd, userHome: homeDir(env) };
}

function resolveName(name: string, ctx: InterpolationContext): string | undefined {
  switch (name) {
    case "userHome":
      return ctx.userHome ?? homeDir();
    case "workspaceFolder":
      return ctx.workspaceFolder;
    case "workspaceFolderBasename":
      return path.basename(ctx.workspaceFolder);
    case "pathSeparator":
    case "/":
      return path.sep;
  }
  const key = name.startsWith("env:") ? name.slice(4) : name;
  return ctx.env[key];
}

export function interpolateString(s: string, ctx: InterpolationContext, unresolved: Set<string>): string {
  return s.replace(PATTERN, (whole, name: string) => {
    const v = resolveName(name, ctx);
    if (v === undefined) {
      unresolved.add(name.startsWith("env:") ? name.slice(4) : name);
      return whole;
    }
    return v;
  });
}

/** Interpolate every string inside `value` (objects and arrays included; keys are left alone). */
export function interpolate<T>(value: T, ctx: InterpolationContext): Interpolated<T> {
  const unresolved = new Set<string>();
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return interpolateString(v, ctx, unresolved);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === "object") {
      const out: Record<string, unknown> = {};
      // defineProperty: a key named `__proto__` stays a key instead of replacing the prototype
      for (const [k, x] of Object.entries(v)) {
        Object.defineProperty(out, k, {
          value: walk(x),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    }
    return v;
  };
  return { value: walk(value) as T, unresolved: [...unresolved].sort() };
}

/** Names referenced by `${…}` in `value`, without resolving anything. */
export function referencedNames(value: unknown): string[] {
  const names = new Set<string>();
  const walk = (v: unknown): void => {
    if (typeof v === "string") { for (const m of v.matchAll(PATTERN)) names.add(m[1]); }
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") Object.values(v).forEach(walk);
  };
  walk(value);
  return [...names].sort();
}

/** Each name referenced by `${…}` in `value` with the path of the first string that uses it. */
export function referenceSites(value: unknown): { ref: string; path: (string | number)[] }[] {
  const sites = new Map<string, (string | number)[]>();
  const walk = (v: unknown, at: (string | number)[]): void => {
    if (typeof v === "string") {
      for (const m of v.matchAll(PATTERN)) if (!sites.has(m[1])) sites.set(m[1], at);
    } else if (Array.isArray(v)) v.forEach((x, i) => walk(x, [...at, i]));
    else if (v && typeof v === "object") { for (const [k, x] of Object.entries(v)) walk(x, [...at, k]); }
  };
  walk(value, []);
  return [...sites].map(([ref, path]) => ({ ref, path }));
}
