/**
 * How a command is started on Windows without a shell deciding anything. A `.exe` (or `.com`) is
 * spawned directly, its arguments quoted by the runtime. A batch file (`.cmd`/`.bat` — `npx`,
 * `npm`, `pnpm` and every `node_modules\.bin` shim are batch files) cannot be: since the
 * BatBadBut fixes (CVE-2024-27980) Node, Bun and Deno refuse to spawn one without `shell: true`,
 * and `shell: true` would hand the arguments to cmd.exe unescaped. So hermit builds the cmd.exe
 * line itself, the way Rust's standard library does since CVE-2024-24576 (after yt-dlp):
 *
 *   %ComSpec% /e:ON /v:OFF /d /s /c ""C:\path with spaces\npx.cmd" -y "a&b" "50%%cd:~,%""
 *
 * passed verbatim (`windowsVerbatimArguments`, so the runtime adds no quotes of its own). `/d`
 * skips AutoRun, `/v:OFF` keeps `!` literal, `/s` strips exactly the outer pair of quotes. Every
 * argument with anything but `[A-Za-z0-9#$*+-./:?@\_]` is quoted; inside, `"` is doubled (both
 * cmd.exe's quote tracking and the program's argv parser read `""` as a literal quote, so cmd's
 * metacharacters stay inside quotes even when a shim re-parses them through `%*`) and `%` becomes
 * `%%cd:~,%` (an empty substring of %cd%, so `%PATH%` in an argument is not expanded). Newlines
 * cannot be passed at all and are refused, as Rust does. Pure: decides, spawns nothing.
 */

export interface SpawnPlan {
  file: string;
  args: string[];
  /** Pass `args` to CreateProcess as they are (no quoting by the runtime). */
  verbatim: boolean;
}

export class BatchArgumentError extends Error {
  override name = "BatchArgumentError";
}

function isBatchFile(file: string): boolean {
  return /\.(cmd|bat)$/i.test(file);
}

const UNQUOTED = /^[A-Za-z0-9#$*+\-./:?@\\_]+$/;

/** One argument of a batch file's command line (see the docblock). */
export function batchArgument(arg: string): string {
  if (/[\r\n\0]/.test(arg)) {
    throw new BatchArgumentError(
      `a batch file cannot be given an argument with a line break: ${JSON.stringify(arg.slice(0, 40))}`,
    );
  }
  const quote = arg === "" || arg.endsWith("\\") || !UNQUOTED.test(arg);
  let out = "";
  let backslashes = 0;
  for (const ch of arg) {
    if (ch === "\\") {
      backslashes++;
      out += ch;
      continue;
    }
    if (ch === '"') out += "\\".repeat(backslashes) + '"'; // 2n backslashes, then "" for the quote
    else if (ch === "%") out += "%%cd:~,";
    backslashes = 0;
    out += ch;
  }
  return quote ? `"${out}${"\\".repeat(backslashes)}"` : out;
}

/**
 * How to start `file` (already resolved, e.g. by `which`) with `args` on Windows. `comspec` is
 * the environment's ComSpec (cmd.exe when unset). Throws BatchArgumentError for what a batch
 * file cannot be given.
 */
export function windowsSpawnPlan(file: string, args: readonly string[], comspec?: string): SpawnPlan {
  if (!isBatchFile(file)) return { file, args: [...args], verbatim: false };
  if (file.includes('"') || file.endsWith("\\")) {
    throw new BatchArgumentError(`not a usable batch file path: ${file}`);
  }
  const line = [`"${file}"`, ...args.map(batchArgument)].join(" ");
  return {
    file: comspec || "cmd.exe",
    args: ["/e:ON", "/v:OFF", "/d", "/s", "/c", `"${line}"`],
    verbatim: true,
  };
}

/** ComSpec from an environment whose key case is unknown (Windows keys are case-insensitive). */
export function comspecOf(env: Readonly<Record<string, string | undefined>>): string | undefined {
  for (const [k, v] of Object.entries(env)) if (k.toUpperCase() === "COMSPEC" && v) return v;
  return undefined;
}
