/**
 * Which version of a package a runner entry (`npx`, `npm exec`, `pnpm dlx`, `bunx`, `uvx`, `pipx
 * run` …)
 * really ran. The runner resolves the spec itself (the registry's newest, a range, whatever is
 * already installed locally), so hermit looks at what it started: the processes in the upstream's
 * process group (Linux: their command lines in /proc), each absolute path in them followed to the
 * installed package it lies in — the `package.json` of that name above it (npm, bun), or the
 * `<name>-<version>.dist-info` of the environment it belongs to (uv, pipx). Where process command lines
 * cannot be read, the runner's own cache says: npm's `_npx/<hash>/package.json` records the specs
 * it was made for (npx and npm exec only: what pnpm or yarn ran is not there), bunx keeps one
 * directory per spec in the temporary directory.
 */
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, realpathSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { groupMembers } from "../platform/proc.ts";
import { isPython, type PackageRef, samePackage } from "./packages.ts";

/** The version that ran, or undefined when it cannot be told. */
export function versionThatRan(
  ref: PackageRef,
  pid: number | undefined,
  env: Readonly<Record<string, string | undefined>>,
  platform: NodeJS.Platform = process.platform,
): string | undefined {
  if (pid !== undefined && platform === "linux") {
    for (const member of groupMembers(pid) ?? []) {
      for (const arg of commandLine(member)) {
        // as the process sees it first: a confined one has its own layer over the package cache
        const seen = arg.startsWith("/") ? inRootOf(member, arg) : undefined;
        const v = (seen ? versionAtPath(ref, seen, true) : undefined) ?? versionAtPath(ref, arg);
        if (v) return v;
      }
    }
  }
  return versionFromCache(ref, env, platform);
}

/**
 * uv: the version of each package `--with` added (by the name `names` gives it) that ran, read in
 * the same environment as the tool's own (Linux: through the process group's command lines).
 */
export function extraVersionsThatRan(
  ref: PackageRef,
  names: readonly string[],
  pid: number | undefined,
  platform: NodeJS.Platform = process.platform,
): Record<string, string> {
  if (!names.length || pid === undefined || platform !== "linux") return {};
  for (const member of groupMembers(pid) ?? []) {
    for (const arg of commandLine(member)) {
      if (!arg.startsWith("/")) continue;
      const at = [inRootOf(member, arg), arg].find((f) =>
        f && existsSync(f) && pythonEnvVersion(ref.name, f)
      );
      if (!at) continue;
      const out: Record<string, string> = {};
      for (const name of names) {
        const v = pythonEnvVersion(name, at);
        if (v) out[name] = v;
      }
      return out;
    }
  }
  return {};
}

function commandLine(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
  } catch {
    return [];
  }
}

/**
 * `file` as process `pid` sees it, through `/proc/PID/root` (its own mounts), every symbolic link
 * resolved inside that root; undefined where it cannot be followed.
 */
function inRootOf(pid: number, file: string): string | undefined {
  const root = `/proc/${pid}/root`;
  let rest = file.split("/").filter(Boolean);
  let done: string[] = [];
  for (let links = 0; rest.length;) {
    const name = rest.shift()!;
    if (name === ".") continue;
    if (name === "..") {
      done.pop();
      continue;
    }
    const at = `${root}/${[...done, name].join("/")}`;
    let target: string | undefined;
    try {
      if (lstatSync(at).isSymbolicLink()) target = readlinkSync(at);
    } catch {
      return undefined;
    }
    if (target === undefined) done.push(name);
    else {
      if (++links > 40) return undefined;
      if (target.startsWith("/")) done = [];
      rest = [...target.split("/").filter(Boolean), ...rest];
    }
  }
  return `${root}/${done.join("/")}`;
}

/**
 * The version of `ref`'s package that `file` (a script a process runs) belongs to; `resolved`:
 * its links are resolved already. Pure over the file system.
 */
export function versionAtPath(ref: PackageRef, file: string, resolved = false): string | undefined {
  if (!path.isAbsolute(file) || !existsSync(file)) return undefined;
  if (isPython(ref.runner)) return pythonEnvVersion(ref.name, file);
  let dir: string;
  try {
    dir = path.dirname(resolved ? file : realpathSync(file));
  } catch {
    return undefined;
  }
  for (;;) {
    const pkg = readJson(path.join(dir, "package.json"));
    if (pkg && typeof pkg.name === "string" && samePackage(ref.runner, pkg.name, ref.name)) {
      return typeof pkg.version === "string" ? pkg.version : undefined;
    }
    const up = path.dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

/** A script in a Python environment (`…/bin/x`, `…/Scripts/x.exe`): the dist-info of `name` in it. */
function pythonEnvVersion(name: string, file: string): string | undefined {
  const want = name.replace(/\[.*$/, "").toLowerCase().replace(/[-_.]+/g, "_");
  let dir = path.dirname(file); // not realpath: a venv's python is a link to the base interpreter
  for (let i = 0; i < 4; i++) {
    const sites = [
      ...list(path.join(dir, "lib")).filter((d) => d.startsWith("python")).map((d) =>
        path.join(dir, "lib", d, "site-packages")
      ),
      path.join(dir, "Lib", "site-packages"),
    ];
    for (const site of sites) {
      for (const entry of list(site)) {
        const m = /^(.+)-([^-]+)\.dist-info$/.exec(entry);
        if (m && m[1].toLowerCase().replace(/[-_.]+/g, "_") === want) return m[2];
      }
    }
    const up = path.dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return undefined;
}

/** From the runner's cache: npm's `_npx` directories, bunx's per-spec directories. */
export function versionFromCache(
  ref: PackageRef,
  env: Readonly<Record<string, string | undefined>>,
  platform: NodeJS.Platform = process.platform,
): string | undefined {
  if (ref.runner === "npx" || ref.runner === "npm exec") {
    const cache = env.npm_config_cache ?? env.NPM_CONFIG_CACHE ??
      (platform === "win32" && env.LOCALAPPDATA
        ? path.join(env.LOCALAPPDATA, "npm-cache")
        : path.join(env.HOME ?? os.homedir(), ".npm"));
    const npx = path.join(cache, "_npx");
    for (const hash of list(npx)) {
      const made = readJson(path.join(npx, hash, "package.json"));
      const specs = (made?._npx as { packages?: unknown } | undefined)?.packages;
      if (!Array.isArray(specs) || specs.length !== 1 || specs[0] !== ref.spec) continue;
      const pkg = readJson(path.join(npx, hash, "node_modules", ref.name, "package.json"));
      if (typeof pkg?.version === "string") return pkg.version;
    }
    return undefined;
  }
  if (ref.runner === "bunx") {
    const tmp = env.BUN_TMPDIR ?? env.TMPDIR ?? os.tmpdir();
    const uid = typeof process.getuid === "function" ? process.getuid() : 0;
    const dir = path.join(tmp, `bunx-${uid}-${ref.name}@${ref.requested ?? "latest"}`);
    const pkg = readJson(path.join(dir, "node_modules", ref.name, "package.json"));
    return typeof pkg?.version === "string" ? pkg.version : undefined;
  }
  return undefined;
}

function list(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function readJson(file: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(readFileSync(file, "utf8"));
    return v && typeof v === "object" ? v : undefined;
  } catch {
    return undefined;
  }
}
