/**
 * The sandbox policy of one entry (an upstream server or a command tool), decided purely from the
 * manifest's `sandbox:` settings, the defaults and where things are:
 *
 * - reads: everything but the user's secrets (`secrets.ts`), the host's sockets an entry may not
 *   connect to (`sockets.ts`), hermit's state directory and every known adapter's `.serve/`;
 *   `read:` re-opens, `deny_read:` adds. The deepest path named
 *   decides; on one path a declared line beats a default and `deny_read` beats `read`.
 * - writes: the entry's private TMPDIR, the package managers' caches, what `write:` names, and for
 *   `trust: full` servers and command tools also the workspace (unless it is `/` or the home
 *   directory: a host started there has no project); a few devices (`/dev/null`, …). Never, unless
 *   `write:` names them: the adapter's own `hermit.yaml` and `hermit.lock`, which say how it is
 *   confined (an adapter kept inside the workspace would otherwise rewrite its own policy), and
 *   in the workspace what git, editors and hosts run from it later (`runs_later.ts`).
 * - network: `all` for `trust: full` servers and command tools, `none` for untrusted ones, unless
 *   `network:` says otherwise (a list goes through hermit's egress proxy).
 */
import path from "node:path";
import { childEnv } from "../gates/env.ts";
import { interpolateString, type InterpolationContext } from "../manifest/interpolate.ts";
import type { Destination, SandboxSettings, Trust } from "../manifest/types.ts";
import type { FsRule, Level } from "./landlock.ts";
import { runsLaterPaths } from "./runs_later.ts";
import { defaultSecrets } from "./secrets.ts";
import { hostSockets } from "./sockets.ts";

/**
 * The files that decide an adapter's confinement, read-only to what it starts (with the manifest
 * hermit actually read, when a path given named another file).
 */
export const POLICY_FILES = ["hermit.yaml", "hermit.lock"];

export type NetworkRule = { mode: "all" } | { mode: "none" } | { mode: "allow"; allow: Destination[] };

export interface PolicyContext {
  platform: NodeJS.Platform;
  home: string;
  /** hermit's own environment: XDG locations, credential-file variables, cache overrides. */
  env: Readonly<Record<string, string | undefined>>;
  interpolation: InterpolationContext;
  adapterDir: string;
  /** The manifest hermit read (default `<adapterDir>/hermit.yaml`; a path given may name another). */
  manifestFile?: string;
  stateDir: string;
  /** The entry's private temporary directory (its TMPDIR). */
  tmpDir: string;
  /** Adapter directories whose `.serve/` (the service's bearer token) is protected. */
  servedAdapters: readonly string[];
  /** Files no entry may read, besides the defaults: the service's `--token-file`. */
  hermitSecrets?: readonly string[];
  /** hermit's uid (where the user's runtime directory, `/run/user/UID`, holds sockets to hide). */
  uid?: number;
  /** `HERMIT_SANDBOX=require`. */
  requireAll: boolean;
  /** The text of the user's npm config (`~/.npmrc`), where a `cache=` line may move npm's cache. */
  npmrc?: string;
  /** The text of the workspace repository's config, where `core.hooksPath` may move git's hooks. */
  gitConfig?: string;
  /** The working trees of its submodules (`repositoryFacts`), whose `.git` files are kept. */
  submoduleTrees?: readonly string[];
  /**
   * The environment the child gets (gate 2's filtered one plus what the entry declares), when
   * known: a cache variable only moves the cache the child uses if the child has it. Without it,
   * the part of `env` every child inherits.
   */
  childEnv?: Readonly<Record<string, string | undefined>>;
}

export interface Entry {
  /** `mcp_servers.NAME` or `tools.NAME`. */
  label: string;
  kind: "server" | "tool";
  trust: Trust;
  settings: SandboxSettings;
}

export interface Policy {
  label: string;
  off: boolean;
  require: boolean;
  fs: FsRule[];
  network: NetworkRule;
  /** The settings named the network (for hints: the key that would open it). */
  networkDeclared: boolean;
  tmpDir: string;
  caches: PackageCache[];
  /** `${…}` names in sandbox paths that are not set (those paths are left out). */
  unresolved: string[];
  /** Declared `write:` paths written with a trailing `/`: directories to create when missing. */
  create: string[];
  /** The workspace is `/` or the home directory (or above it), so it is not made writable. */
  workspaceSkipped: boolean;
}

/** Devices any program may write (and read). */
const DEVICES = [
  "/dev/null",
  "/dev/zero",
  "/dev/full",
  "/dev/random",
  "/dev/urandom",
  "/dev/tty",
  "/dev/shm",
];

export interface PackageCache {
  /** The package manager (and its runner: npx, uvx, bunx, pnpx) that uses it. */
  manager: "npm" | "uv" | "bun" | "pnpm";
  path: string;
}

/** The `cache=` of an npm config file's text (the last one wins, as npm reads it), when absolute. */
export function npmrcCache(npmrc: string | undefined, home: string): string | undefined {
  let found: string | undefined;
  for (const line of (npmrc ?? "").split(/\r?\n/)) {
    const m = /^\s*cache\s*=\s*(.+?)\s*$/.exec(line);
    if (m) found = m[1].replace(/^~(?=\/|$)/, home).replace(/^\$\{HOME\}|^\$HOME/, home);
  }
  return found && path.posix.isAbsolute(found) ? path.posix.normalize(found) : undefined;
}

/**
 * Where npm/npx, uv/uvx, bun/bunx and pnpm keep their caches (each honours its variable, and npm
 * the `cache=` of the user's `.npmrc`).
 */
export function packageCaches(
  platform: NodeJS.Platform,
  home: string,
  env: Readonly<Record<string, string | undefined>>,
  npmrc?: string,
): PackageCache[] {
  const p = path.posix;
  const abs = (v: string | undefined) => v && p.isAbsolute(v) ? p.normalize(v) : undefined;
  const cache = abs(env.XDG_CACHE_HOME) ?? p.join(home, ".cache");
  const data = abs(env.XDG_DATA_HOME) ?? p.join(home, ".local", "share");
  const list: [PackageCache["manager"], string | undefined][] = [
    ["npm", abs(env.npm_config_cache) ?? npmrcCache(npmrc, home) ?? p.join(home, ".npm")],
    ["uv", abs(env.UV_CACHE_DIR) ?? p.join(cache, "uv")],
    // uvx keeps its environments in the cache; only a Python it downloads goes elsewhere. Not the
    // rest of uv's data directory: its installed tools (run unconfined from ~/.local/bin) and
    // stored credentials
    ["uv", abs(env.UV_PYTHON_INSTALL_DIR) ?? p.join(data, "uv", "python")],
    [
      "bun",
      abs(env.BUN_INSTALL_CACHE_DIR) ??
        p.join(abs(env.BUN_INSTALL) ?? p.join(home, ".bun"), "install", "cache"),
    ],
    ["pnpm", p.join(cache, "pnpm")],
    // the store, not PNPM_HOME itself: that is pnpm's global bin directory, first on the user's PATH
    ["pnpm", p.join(abs(env.PNPM_HOME) ?? p.join(data, "pnpm"), "store")],
  ];
  if (platform === "darwin") {
    list.push(
      ["pnpm", p.join(home, "Library", "Caches", "pnpm")],
      ["pnpm", p.join(home, "Library", "pnpm", "store")],
    );
  }
  const seen = new Set<string>();
  return list.filter((x): x is [PackageCache["manager"], string] =>
    !!x[1] && !seen.has(x[1]) && !!seen.add(x[1])
  )
    .map(([manager, at]) => ({ manager, path: at }));
}

/** The manager a command runs (`npx` → npm), for creating its cache before the sandbox closes. */
export function managerOf(command: string): PackageCache["manager"] | undefined {
  const base = path.basename(command).replace(/\.(cmd|exe)$/i, "");
  return ({
    npx: "npm",
    npm: "npm",
    uv: "uv",
    uvx: "uv",
    bun: "bun",
    bunx: "bun",
    pnpm: "pnpm",
    pnpx: "pnpm",
  } as const)[
    base as "npx"
  ];
}

/** A path from the manifest: interpolated, `~` expanded, relative to the adapter. */
export function resolvePath(raw: string, ctx: PolicyContext, unresolved: Set<string>): string | undefined {
  const missing = new Set<string>();
  let s = interpolateString(raw, ctx.interpolation, missing);
  if (missing.size) {
    for (const m of missing) unresolved.add(m);
    return undefined;
  }
  if (s === "~" || s.startsWith("~/")) s = ctx.home + s.slice(1);
  return path.posix.normalize(path.posix.isAbsolute(s) ? s : path.posix.join(ctx.adapterDir, s)).replace(
    /(.)\/$/,
    "$1",
  );
}

export function resolvePolicy(entry: Entry, ctx: PolicyContext): Policy {
  const s = entry.settings;
  const unresolved = new Set<string>();
  const caches = packageCaches(
    ctx.platform,
    ctx.home,
    ctx.childEnv ?? childEnv(ctx.env, {}, ctx.platform),
    ctx.npmrc,
  );
  const declared = (list: string[]) =>
    list.map((p) => resolvePath(p, ctx, unresolved)).filter((p): p is string => p !== undefined);

  // On one path: among defaults the narrower wins; a declared line replaces a default one, except
  // that `read:` never narrows a writable path; `deny_read:` is final.
  const rules = new Map<string, { level: Level; declared: boolean }>();
  const rank = { deny: 0, read: 1, write: 2 };
  const put = (p: string, level: Level, isDeclared: boolean) => {
    const prev = rules.get(p);
    if (prev && !isDeclared && (prev.declared || rank[prev.level] <= rank[level])) return;
    if (prev?.declared && prev.level === "deny") return;
    if (prev && isDeclared && level === "read" && prev.level === "write") return;
    rules.set(p, { level, declared: isDeclared });
  };
  put("/", "read", false);
  for (const secret of defaultSecrets(ctx.platform, ctx.home, ctx.env)) put(secret.path, "deny", false);
  const sockets = hostSockets(ctx.platform, ctx.home, ctx.env, ctx.uid).map((s) => s.path);
  for (const s of sockets) put(s, "deny", false);
  put(ctx.stateDir, "deny", false);
  for (const dir of new Set([ctx.adapterDir, ...ctx.servedAdapters])) {
    put(path.posix.join(dir, ".serve"), "deny", false);
  }
  for (const f of ctx.hermitSecrets ?? []) put(f, "deny", false);
  const policyFiles = [
    ...POLICY_FILES.map((f) => path.posix.join(ctx.adapterDir, f)),
    ...(ctx.manifestFile ? [ctx.manifestFile] : []),
  ].filter((f, i, all) => all.indexOf(f) === i);
  for (const f of policyFiles) put(f, "read", false);
  for (const d of DEVICES) put(d, "write", false);
  for (const c of caches) put(c.path, "write", false);
  // the workspace is a project: `/` or the home directory (a host started in either) is not one
  const ws = path.posix.normalize(ctx.interpolation.workspaceFolder);
  const workspaceSkipped = ws === "/" || ctx.home === ws || ctx.home.startsWith(ws + "/");
  const runsLater: string[] = [];
  if ((entry.kind === "tool" || entry.trust === "full") && !workspaceSkipped) {
    put(ws, "write", false);
    runsLater.push(...runsLaterPaths(ws, {
      home: ctx.home,
      gitConfig: ctx.gitConfig,
      submoduleTrees: ctx.submoduleTrees,
      adapters: [ctx.adapterDir, ...ctx.servedAdapters],
    }));
    for (const f of runsLater) put(f, "read", false);
  }
  put(ctx.tmpDir, "write", false);
  for (const p of declared(s.read)) put(p, "read", true);
  for (const p of declared(s.write)) put(p, "write", true);
  const create = declared(s.write.filter((w) => /[/\\]$/.test(w)));
  for (const p of declared(s.denyRead)) put(p, "deny", true);

  const networkDeclared = s.network !== undefined;
  const net = s.network ?? (entry.kind === "tool" || entry.trust === "full" ? "all" : "none");
  return {
    label: entry.label,
    off: s.off,
    require: s.require || ctx.requireAll,
    fs: [...rules].map(([p, r]) => ({
      path: p,
      level: r.level,
      ...(!r.declared && policyFiles.includes(p) ? { soft: true } : {}),
      ...(r.level === "deny" && sockets.includes(p) ? { socket: true } : {}),
      ...(r.level === "deny" && r.declared ? { declaredDeny: true } : {}),
      ...(!r.declared && r.level === "read" && runsLater.includes(p) && !policyFiles.includes(p)
        ? { soft: true, quiet: true }
        : {}),
    })),
    network: net === "all" || net === "none" ? { mode: net } : { mode: "allow", allow: net },
    networkDeclared,
    tmpDir: ctx.tmpDir,
    caches,
    unresolved: [...unresolved].sort(),
    create,
    workspaceSkipped: workspaceSkipped && (entry.kind === "tool" || entry.trust === "full"),
  };
}
