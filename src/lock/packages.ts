/**
 * Which package a package runner runs, read from an entry's command and arguments as written:
 * `npx`, `npm exec`/`npm x`, `pnpm dlx`/`pnpx` and `yarn dlx`, `bunx`/`bun x` (npm packages),
 * `uvx`/`uv tool run` and `pipx run` (PyPI), `deno run npm:…`/`jsr:…` and `deno x`. The runner,
 * the package name, the version asked for (if any) and whether that is one exact version; or why
 * it cannot be pinned: a path or URL, several packages, an option hermit does not know before a
 * bare word (it may take that word as its value, so which package runs is unclear), a runner
 * started through another command (`env npx`, `sh -c "npx …"`), which hermit does not read. And the
 * pin: the same arguments with the package spec rewritten to the locked version (`pkg` →
 * `pkg@1.2.3`, `npm:pkg` → `npm:pkg@1.2.3`; after `--from`, `--spec` and for `pipx run`,
 * `pkg==1.2.3`; each `uvx --with` package, `pkg==1.2.3`), which is what hermit spawns, never what
 * it writes into the user's manifest. A locked package pins by its registry and name, whichever
 * runner recorded it. Pure.
 */
import { baseName, type Dialect, HOSTS, OPTIONS, scan, type Spec } from "./runner_options.ts";
import type { LockedPackage, Registry, Runner } from "./types.ts";
import { type ExtraOption, extraOptions, pinExtras, unreadExtras } from "./with_packages.ts";

export interface PackageRef {
  runner: Runner;
  /** The runner as written, for messages: `npx`, `npm exec`, `pnpm dlx`, `uv tool run` … */
  via: string;
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
  /** `--from` (uv), `pipx run`: a requirement (`pkg==1.2.3`) rather than a tool spec (`pkg@1.2.3`). */
  requirement: boolean;
  /** What follows the version in the argument (deno: a path in the package, `npm:pkg/sub`). */
  suffix: string;
  /** uv: the packages `--with` adds beside it. */
  extras: ExtraOption[];
  /** uv: options before it that add packages hermit cannot read (`--with-requirements`). */
  unread: string[];
}

/** Not something hermit can pin (a git URL, a local path, several packages …), and why. */
export interface Unpinnable {
  runner: Runner;
  via: string;
  why: string;
  /** An option hermit does not know, followed by a bare word: which package runs is unclear. */
  unclear?: string;
  /** The command the runner is started through (`env`, `sh`), which hermit does not read. */
  through?: string;
}

interface Form {
  runner: Runner;
  dialect: Dialect;
  via: string;
  /** Where the runner's own arguments start, and package options met before them (npm's). */
  skip: number;
  before: Spec[];
  /** deno run: the script is a package only when it says so (`npm:`, `jsr:`). */
  scheme?: boolean;
}

/**
 * The runner a command is (any directory, `.cmd`/`.exe` too): `npx`, `npm exec`, `bun x`, … with
 * where its arguments start; an `Unpinnable` when an option hermit does not know hides whether
 * it is one; undefined when it is none.
 */
export function runnerOf(
  command: string | undefined,
  args: readonly string[],
): Form | Unpinnable | undefined {
  if (!command) return undefined;
  const base = baseName(command);
  const host = Object.hasOwn(HOSTS, base) ? HOSTS[base] : undefined;
  if (!host) return undefined;
  const { runner, dialect } = host;
  if (host.words[0].length === 0) return { runner, dialect, via: base, skip: 0, before: [] };
  const s = scan(args, 0, OPTIONS[dialect], Math.max(...host.words.map((w) => w.length)));
  if (s.unclear) {
    if (!host.words.some((w) => args.includes(w[0]))) return undefined;
    return { runner, via: base, why: unclearWhy(s.unclear), unclear: s.unclear };
  }
  const said = s.words.map((w) => w.text);
  const words = host.words.find((w) => w.every((x, k) => said[k] === x));
  // `deno npm:pkg` is `deno run npm:pkg`
  if (!words && dialect === "deno" && s.words.length && !s.dashed && SCHEME.test(said[0])) {
    return { runner, dialect, via: base, skip: s.words[0].index, before: [], scheme: true };
  }
  if (!words) return undefined;
  return {
    runner,
    dialect,
    via: [base, ...words].join(" "),
    skip: s.words[words.length - 1].index + 1,
    before: dialect === "npm" ? s.options : [],
    scheme: dialect === "deno" && words[0] === "run",
  };
}

/** deno's package specifiers, and the URLs it runs as they are served. */
const SCHEME = /^(?:npm|jsr):/;
const URL_SCRIPT = /^https?:\/\//i;

const unclearWhy = (option: string) =>
  `${option} is not an option hermit knows, so which package runs is unclear`;

/** A runner started through another command (`env npx …`, `sh -c "npx …"`): found, never read. */
function wrapped(command: string | undefined, args: readonly string[]): Unpinnable | undefined {
  if (!command) return undefined;
  const tokens = [command, ...args].flatMap((a) => a.split(/[\s;&|()`'"<>]+/)).filter(Boolean);
  for (let k = 1; k < tokens.length; k++) {
    const form = runnerOf(tokens[k], tokens.slice(k + 1));
    if (!form) continue;
    const through = baseName(command);
    return {
      runner: form.runner,
      via: form.via,
      why: `it starts ${form.via} through ${through}, which hermit does not read`,
      through,
    };
  }
  return undefined;
}

/** npm exec reads `--package` and `--call` after the package too (up to `--`): a different package. */
function npmLateOption(args: readonly string[], from: number): string | undefined {
  for (let i = from; i < args.length && args[i] !== "--"; i++) {
    const name = args[i].split("=")[0];
    if (name === "-c" || (name.length > 4 && ["--package", "--call"].some((o) => o.startsWith(name)))) {
      return name;
    }
  }
  return undefined;
}

const SEMVER_ID = "(?:0|[1-9]\\d*|\\d*[A-Za-z-][0-9A-Za-z-]*)";
const EXACT_SEMVER = new RegExp(
  `^(?:0|[1-9]\\d*)\\.(?:0|[1-9]\\d*)\\.(?:0|[1-9]\\d*)(?:-${SEMVER_ID}(?:\\.${SEMVER_ID})*)?` +
    "(?:\\+[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*)?$",
);
const EXACT_PEP440 =
  /^(?:\d+!)?\d+(?:\.\d+)*(?:(?:a|b|rc)\d+)?(?:\.post\d+)?(?:\.dev\d+)?(?:\+[a-z0-9]+(?:\.[a-z0-9]+)*)?$/i;

/**
 * Is `version` one exact version for `runner`: npm's semver (no range, tag, URL, git, path or
 * `npm:` alias), PEP 440's public version with an optional epoch and local part for uvx? The one
 * test: what a manifest asks for, and what a lock may hold. Pure.
 */
export function exactVersion(runner: Runner, version: string): boolean {
  return (isPython(runner) ? EXACT_PEP440 : EXACT_SEMVER).test(version);
}

/** The package an entry runs, undefined when its command runs none through a package runner. */
export function packageOf(
  command: string | undefined,
  args: readonly string[],
): PackageRef | Unpinnable | undefined {
  const form = runnerOf(command, args);
  if (!form) return wrapped(command, args);
  if ("why" in form) return form;
  const { runner, via, dialect } = form;
  const s = scan(args, form.skip, OPTIONS[dialect], 1);
  if (s.unclear) return { runner, via, why: unclearWhy(s.unclear), unclear: s.unclear };
  if (form.scheme && s.words.length && !SCHEME.test(s.words[0].text)) {
    // deno run of a script: a local file runs no package; a URL runs whatever it serves
    if (!URL_SCRIPT.test(s.words[0].text)) return undefined;
    return {
      runner,
      via,
      why: `'${s.words[0].text}' is a URL: deno runs what it serves, which has no version`,
    };
  }
  const late = dialect === "npm" && s.words.length && !s.dashed
    ? npmLateOption(args, s.words[0].index + 1)
    : undefined;
  if (late) return { runner, via, why: `npm reads ${late} after the package too, so the package is unclear` };
  const found = [...form.before, ...s.options];
  if (found.length > 1) return { runner, via, why: "it names several packages" };
  const word = s.words[0];
  const pick = found[0] ?? (word ? { index: word.index, prefix: "", spec: word.text } : undefined);
  if (!pick) return { runner, via, why: "it names no package" };
  const parsed = isPython(runner)
    ? parsePythonSpec(pick.spec)
    : runner === "deno"
    ? parseDenoSpec(pick.spec)
    : parseNpmSpec(pick.spec);
  if ("why" in parsed) return { runner, via, why: parsed.why };
  return {
    runner,
    via,
    name: parsed.name,
    requested: parsed.requested,
    exact: parsed.requested !== undefined &&
      exactVersion(runner, parsed.requested),
    spec: pick.spec,
    index: pick.index,
    prefix: pick.prefix,
    requirement: runner === "pipx run" || (runner === "uvx" && found.length > 0),
    suffix: "suffix" in parsed ? parsed.suffix as string : "",
    extras: extraOptions(s.extras),
    unread: runner === "uvx" ? unreadExtras(args, form.skip, word?.index ?? args.length) : [],
  };
}

/** The runners of Python packages (PyPI), whose versions are PEP 440 and names PEP 503. */
export function isPython(runner: Runner): boolean {
  return runner === "uvx" || runner === "pipx run";
}

/** Where `name` comes from when `runner` runs it (deno: by its `npm:` or `jsr:` scheme). */
export function registryOf(runner: Runner, name: string): Registry {
  if (isPython(runner)) return "pypi";
  return runner === "deno" && name.startsWith("jsr:") ? "jsr" : "npm";
}

/** How to ask for one exact version of the package in hermit.yaml, for messages. */
export function pinHint(ref: PackageRef): string {
  return `${ref.name}${isPython(ref.runner) ? "==" : "@"}X.Y.Z`;
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

/**
 * deno's `npm:name@range/path` and `jsr:@scope/name@range/path`, or a bare npm name (`deno x`);
 * the name keeps its scheme, as written.
 */
export function parseDenoSpec(
  spec: string,
): { name: string; requested?: string; suffix: string } | { why: string } {
  const m = /^(npm:|jsr:)?((?:@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*)(?:@([^/]+))?(\/.*)?$/i.exec(spec);
  if (!m || (m[1] === "jsr:" && !m[2].startsWith("@"))) {
    return { why: `'${spec}' is not a package from npm or JSR (npm:name, jsr:@scope/name)` };
  }
  return { name: (m[1] ?? "") + m[2], requested: m[3], suffix: m[4] ?? "" };
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
  return packageKey(runner, a) === packageKey(runner, b);
}

/** The same package, whichever runner names it (a lock's npx entry pins `pnpm dlx` and `deno`). */
export function sameLockedPackage(a: { runner: Runner; name: string }, b: { runner: Runner; name: string }) {
  return packageKey(a.runner, a.name) === packageKey(b.runner, b.name);
}

function packageKey(runner: Runner, name: string): string {
  const registry = registryOf(runner, name);
  if (registry === "pypi") return `pypi:${name.replace(/\[.*$/, "").toLowerCase().replace(/[-_.]+/g, "-")}`;
  return `${registry}:${name.replace(/^(?:npm|jsr):/, "")}`;
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
  if (!locked || !isPinnable(ref) || !sameLockedPackage(ref, locked)) return [...args];
  const spec = ref.requirement
    ? `${ref.name}==${locked.version}`
    : `${ref.name}@${locked.version}${ref.suffix}`;
  const out = [...args];
  if (!ref.exact) out[ref.index] = ref.prefix + spec;
  pinExtras(out, ref.extras, locked.with);
  return out;
}
