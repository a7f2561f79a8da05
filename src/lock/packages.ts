/**
 * Which package an `npx`, `bunx` (`bun x`) or `uvx` entry runs, read from its command and
 * arguments as written: the runner, the package name, the version asked for (if any) and whether
 * that is one exact version. And the pin: the same arguments with the package spec rewritten to
 * the locked version (`pkg` → `pkg@1.2.3`; for `uvx --from`, `pkg==1.2.3`), which is what hermit
 * spawns, never what it writes into the user's manifest. Pure.
 */
import type { LockedPackage, Runner } from "./types.ts";

export interface PackageRef {
  runner: Runner;
  name: string;
  /** The version or range or tag as written, if any. */
  requested?: string;
  /** True when `requested` names one exact version. */
  exact: boolean;
  /** The spec as written (what the runner resolves), for messages. */
  spec: string;
  /** Where the spec is in `args`, and the text before it in that argument (`--package=`). */
  index: number;
  prefix: string;
  /** `uvx --from`: a requirement (`pkg==1.2.3`) rather than a tool spec (`pkg@1.2.3`). */
  requirement: boolean;
}

/** Not something hermit can pin (a git URL, a local path, several packages …), and why. */
export interface Unpinnable {
  runner: Runner;
  why: string;
}

/** The runner a command is: `npx`, `bunx`, `bun x`, `uvx` (any directory, `.cmd`/`.exe` too). */
export function runnerOf(
  command: string | undefined,
  args: readonly string[],
): { runner: Runner; skip: number } | undefined {
  if (!command) return undefined;
  const base = command.split(/[\\/]/).pop()!.toLowerCase().replace(/\.(cmd|exe|bat|ps1)$/, "");
  if (base === "npx" || base === "bunx" || base === "uvx") return { runner: base, skip: 0 };
  if (base === "bun" && args[0] === "x") return { runner: "bunx", skip: 1 };
  return undefined;
}

/** npm/bun/uv options that take a value in the next argument. */
const VALUE_OPTIONS: Record<Runner, Set<string>> = {
  npx: new Set([
    "--registry",
    "--cache",
    "--prefix",
    "--userconfig",
    "--globalconfig",
    "--loglevel",
    "--workspace",
    "-w",
    "--node-options",
    "--script-shell",
    "--call",
    "-c",
    "--package",
    "-p",
  ]),
  bunx: new Set(["--package", "-p", "--cwd", "--config", "-c"]),
  uvx: new Set([
    "--from",
    "--with",
    "--with-editable",
    "--with-requirements",
    "--python",
    "-p",
    "--index",
    "--index-url",
    "-i",
    "--extra-index-url",
    "--default-index",
    "--find-links",
    "-f",
    "--directory",
    "--project",
    "--cache-dir",
    "--config-file",
    "--constraints",
    "-c",
    "--overrides",
    "--build-constraints",
    "-b",
    "--env-file",
    "--python-platform",
    "--index-strategy",
    "--keyring-provider",
    "--resolution",
    "--prerelease",
    "--exclude-newer",
    "--link-mode",
    "--refresh-package",
    "--reinstall-package",
    "--upgrade-package",
    "-P",
    "--color",
    "--allow-insecure-host",
    "--config-setting",
    "-C",
  ]),
};

/** The package option of each runner (`--package`/`-p`; uvx: `--from`). */
const PACKAGE_OPTIONS: Record<Runner, Set<string>> = {
  npx: new Set(["--package", "-p"]),
  bunx: new Set(["--package", "-p"]),
  uvx: new Set(["--from"]),
};

const EXACT_SEMVER = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;
const EXACT_PEP440 = /^\d+(?:\.\d+)*(?:(?:a|b|rc)\d+)?(?:\.post\d+)?(?:\.dev\d+)?(?:\+[0-9A-Za-z.]+)?$/;

/** The package an entry runs, undefined when its command is not a package runner. */
export function packageOf(
  command: string | undefined,
  args: readonly string[],
): PackageRef | Unpinnable | undefined {
  const r = runnerOf(command, args);
  if (!r) return undefined;
  const { runner } = r;
  const found: { index: number; prefix: string; spec: string; option: boolean }[] = [];
  let positional: { index: number; spec: string } | undefined;
  for (let i = r.skip; i < args.length; i++) {
    const a = args[i];
    if (a === "--") {
      if (i + 1 < args.length) positional = { index: i + 1, spec: args[i + 1] };
      break;
    }
    if (a.startsWith("-")) {
      const eq = a.indexOf("=");
      const name = eq > 0 ? a.slice(0, eq) : a;
      if (PACKAGE_OPTIONS[runner].has(name)) {
        if (eq > 0) found.push({ index: i, prefix: a.slice(0, eq + 1), spec: a.slice(eq + 1), option: true });
        else if (i + 1 < args.length) {
          found.push({ index: i + 1, prefix: "", spec: args[i + 1], option: true });
        }
      }
      if (eq < 0 && VALUE_OPTIONS[runner].has(name)) i++;
      continue;
    }
    positional = { index: i, spec: a };
    break;
  }
  if (found.length > 1) return { runner, why: "it names several packages" };
  const pick = found[0] ?? (positional ? { ...positional, prefix: "", option: false } : undefined);
  if (!pick) return { runner, why: "it names no package" };
  const parsed = runner === "uvx" ? parsePythonSpec(pick.spec) : parseNpmSpec(pick.spec);
  if ("why" in parsed) return { runner, why: parsed.why };
  return {
    runner,
    name: parsed.name,
    requested: parsed.requested,
    exact: parsed.requested !== undefined &&
      (runner === "uvx" ? EXACT_PEP440 : EXACT_SEMVER).test(parsed.requested),
    spec: pick.spec,
    index: pick.index,
    prefix: pick.prefix,
    requirement: runner === "uvx" && pick.option,
  };
}

export function isPinnable(p: PackageRef | Unpinnable | undefined): p is PackageRef {
  return !!p && "name" in p;
}

/** `name`, `name@range`, `@scope/name@tag`; anything else (paths, URLs, git, aliases) is not pinnable. */
export function parseNpmSpec(spec: string): { name: string; requested?: string } | { why: string } {
  const m = /^((?:@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*)(?:@(.+))?$/i.exec(spec);
  if (!m || /^(?:file|git|github|gitlab|bitbucket|http|https|link|npm):/.test(m[2] ?? "")) {
    return { why: `'${spec}' is not a package from the registry (a path, URL, git or alias spec)` };
  }
  return { name: m[1], requested: m[2] };
}

/** `name`, `name[extra]`, `name==1.2`, `name@1.2` (uvx's tool@version), `name>=1`. */
export function parsePythonSpec(spec: string): { name: string; requested?: string } | { why: string } {
  const m = /^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*(?:(==|@)\s*([^,;\s]+)|([<>=!~][^;]*))?$/.exec(
    spec,
  );
  if (!m) return { why: `'${spec}' is not a package from an index (a path, URL or git spec)` };
  return { name: m[1] + (m[2] ?? ""), requested: m[4] === "latest" ? "latest" : m[4] ?? m[5]?.trim() };
}

/** Compare package names as their registries do (PyPI: case and -_. runs are the same). */
export function samePackage(runner: Runner, a: string, b: string): boolean {
  if (runner !== "uvx") return a === b;
  const norm = (s: string) => s.replace(/\[.*$/, "").toLowerCase().replace(/[-_.]+/g, "-");
  return norm(a) === norm(b);
}

/**
 * The arguments to spawn: the package spec pinned to the locked version when the manifest does
 * not ask for one exact version itself (an exact version written in hermit.yaml always wins).
 */
export function pinArgs(
  command: string | undefined,
  args: readonly string[],
  locked: LockedPackage | undefined,
): string[] {
  const ref = packageOf(command, args);
  if (!locked || !isPinnable(ref) || ref.exact || ref.runner !== locked.runner) return [...args];
  if (!samePackage(ref.runner, ref.name, locked.name)) return [...args];
  const spec = ref.requirement ? `${ref.name}==${locked.version}` : `${ref.name}@${locked.version}`;
  const out = [...args];
  out[ref.index] = ref.prefix + spec;
  return out;
}
