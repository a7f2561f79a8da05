/**
 * The shape of `hermit.lock` once read: per upstream server what it resolved to (the package
 * version that ran, or the URL, and the `serverInfo` it gave) and per exported tool the hash of
 * its definition with the definition itself (kept so a change can be shown as a diff). Keys are
 * the server names of `mcp_servers` and the tools' own (upstream) names.
 */
import type { ToolDefinition } from "./definition.ts";

export const LOCK_FILE = "hermit.lock";
export const LOCK_FORMAT = 1;

/**
 * How a stdio entry gets its package, as the lock records it: the runner that really runs it, its
 * aliases folded (`npm x` is `npm exec`, `pnpx` is `pnpm dlx`, `bun x` is `bunx`, `uv tool run`
 * is `uvx`); `deno` is `deno run` and `deno x` (its package is `npm:name` or `jsr:@scope/name`).
 * Locks written before this knew only npx, bunx and uvx, and recorded `npm exec`, `pnpm dlx` and
 * `yarn dlx` as npx: a package pins by its registry and name, so those still pin.
 */
export const RUNNERS = [
  "npx",
  "npm exec",
  "pnpm dlx",
  "yarn dlx",
  "bunx",
  "uvx",
  "pipx run",
  "deno",
] as const;
export type Runner = typeof RUNNERS[number];

/** Where a runner's packages come from: npm's registry, PyPI, or JSR (deno's `jsr:`). */
export type Registry = "npm" | "pypi" | "jsr";

export interface LockedPackage {
  runner: Runner;
  name: string;
  /** The exact version that ran. */
  version: string;
  /** uv: the packages `--with` added beside it, by name, and the exact version of each that ran. */
  with?: Record<string, string>;
  /**
   * The settings in the entry that point its runner at another registry (`SETTING=url`, sorted;
   * absent: the default one, as in every lock written before this was recorded).
   */
  registry?: string[];
}

export interface LockedTool {
  sha256: string;
  definition: ToolDefinition;
}

export interface LockedServer {
  /** Package runner entries (npx, uvx, …): the package and the version that ran. */
  package?: LockedPackage;
  /** Remote entries: the URL as written in hermit.yaml (never interpolated: no secrets). */
  url?: string;
  /** Other stdio entries: the command line as written. */
  command?: string;
  /** What the server called itself in `initialize`. */
  server_info?: { name: string; version: string };
  /** By the server's own tool name. */
  tools: Record<string, LockedTool>;
}

export interface Lock {
  format: typeof LOCK_FORMAT;
  servers: Record<string, LockedServer>;
}

/** What the adapter's lock says right now: none (behave as without one), one, or an unreadable one. */
export type LockState =
  | { kind: "none" }
  | { kind: "ok"; lock: Lock }
  | { kind: "invalid"; why: string };
