/**
 * How a command is started on Windows without a shell deciding anything. A `.exe` (or `.com`) is
 * spawned directly, its arguments quoted by the runtime. A batch file (`.cmd`/`.bat`, which is
 * what `npx`, `npm`, `pnpm` and every `node_modules\.bin` shim are) cannot be: since the
 * BatBadBut fixes (CVE-2024-27980) Node, Bun and Deno refuse to spawn one without `shell: true`,
 * and `shell: true` would hand the arguments to cmd.exe unescaped. So hermit runs it as
 * `%ComSpec% /d /s /c "<line>"` with every character cmd.exe treats specially caret-escaped, the
 * way cross-spawn does (MIT, the de-facto standard): `/d` skips AutoRun, `/s` takes the quoted
 * line verbatim, and the line is passed with `windowsVerbatimArguments` so nothing re-quotes it.
 * Shims that forward `%*` to another program parse the line twice, so their arguments are escaped
 * twice. `%` cannot be fully escaped inside a cmd line: `%NAME%` of a variable that is set expands
 * (a limitation of cmd.exe that every launcher shares). Pure: decides, spawns nothing.
 */
import path from "node:path";

export interface SpawnPlan {
  file: string;
  args: string[];
  /** Pass `args` to CreateProcess as they are (no quoting by the runtime). */
  verbatim: boolean;
}

const META = /([()\][%!^"`<>&|;, *?])/g;

/** Batch files that pass their arguments on with `%*` (npm's shims and the package managers). */
const SHIM = /(^|[\\/])node_modules[\\/]\.bin[\\/][^\\/]+\.cmd$/i;
const FORWARDERS = new Set(["npx", "npm", "pnpm", "pnpx", "yarn", "yarnpkg", "corepack", "bunx"]);

export function isBatchFile(file: string): boolean {
  return /\.(cmd|bat)$/i.test(file);
}

/** Does this batch file re-parse its arguments (`"%~dp0\node.exe" "…\cli.js" %*`)? */
export function forwardsArguments(file: string): boolean {
  if (SHIM.test(file)) return true;
  const base = path.win32.basename(file).toLowerCase().replace(/\.(cmd|bat)$/, "");
  return FORWARDERS.has(base);
}

/** The program path for cmd.exe: every special character (spaces too) caret-escaped. */
export function escapeCommand(file: string): string {
  return file.replace(META, "^$1");
}

/**
 * One argument for cmd.exe: first quoted for the program's own argv parser (MSVCRT rules:
 * backslashes before a quote doubled, the quote escaped), then every special character,
 * including those quotes, caret-escaped — once, or twice for a line cmd.exe parses twice.
 */
export function escapeArgument(arg: string, twice: boolean): string {
  let a = arg.replace(/(\\*)"/g, '$1$1\\"');
  a = a.replace(/(\\*)$/, "$1$1");
  a = `"${a}"`;
  a = a.replace(META, "^$1");
  if (twice) a = a.replace(META, "^$1");
  return a;
}

/**
 * How to start `file` (already resolved, e.g. by `which`) with `args` on Windows. `comspec` is
 * the environment's ComSpec (cmd.exe when unset).
 */
export function windowsSpawnPlan(file: string, args: readonly string[], comspec?: string): SpawnPlan {
  if (!isBatchFile(file)) return { file, args: [...args], verbatim: false };
  const twice = forwardsArguments(file);
  const line = [escapeCommand(path.win32.normalize(file)), ...args.map((a) => escapeArgument(a, twice))].join(
    " ",
  );
  return { file: comspec || "cmd.exe", args: ["/d", "/s", "/c", `"${line}"`], verbatim: true };
}

/** ComSpec from an environment whose key case is unknown (Windows keys are case-insensitive). */
export function comspecOf(env: Readonly<Record<string, string | undefined>>): string | undefined {
  for (const [k, v] of Object.entries(env)) if (k.toUpperCase() === "COMSPEC" && v) return v;
  return undefined;
}
