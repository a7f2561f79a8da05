/**
 * Resolving a command the way the OS would: a path (relative to a working directory) or a name
 * looked up on PATH. On Windows the lookup is cmd.exe's: a name that already ends in one of
 * PATHEXT's extensions is tried as it is, any other name only with each PATHEXT extension
 * appended — so `npx` finds `npx.cmd` (which `win_cmd.ts` then runs through cmd.exe), never
 * npm's extension-less `npx` shell script beside it. PATH entries may be quoted there. A relative
 * PATH entry (`.`, `node_modules/.bin`) is not searched, as Go's `exec.LookPath` no longer does:
 * it would find a program by the project the host runs in, where a confined entry may have put one
 * that hermit would then run as an entry with `sandbox: off`, or outside any entry.
 */
import { accessSync, constants, statSync } from "node:fs";
import path from "node:path";
import process from "node:process";

function executable(file: string, windows: boolean): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    if (!windows) accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export interface WhichOptions {
  path?: string;
  cwd?: string;
  pathext?: string;
  platform?: NodeJS.Platform;
  /** Is `file` an executable file? (tests replace the file system) */
  isExecutable?: (file: string) => boolean;
}

const DEFAULT_PATHEXT = ".COM;.EXE;.BAT;.CMD";

/** The names to try for `command` on Windows, in order. Pure. */
export function windowsCandidates(command: string, pathext: string): string[] {
  // Lowercase: Windows file names are case-insensitive, and `npx.cmd` is how the file is named.
  const exts = pathext.split(";").map((e) => e.trim().toLowerCase()).filter(Boolean);
  const ext = path.win32.extname(command).toLowerCase();
  if (ext && exts.includes(ext)) return [command];
  return exts.map((e) => command + e);
}

/** The absolute entries of a PATH value, in order (quotes dropped on Windows). Pure. */
export function pathDirs(value: string, windows: boolean): string[] {
  const p = windows ? path.win32 : path.posix;
  return value.split(windows ? ";" : ":")
    .map((d) => (windows ? d.replace(/^"(.*)"$/, "$1") : d))
    .filter((d) => d && p.isAbsolute(d));
}

/** The relative entries of a PATH value, which `which` leaves out. Pure. */
export function relativePathDirs(value: string, windows: boolean): string[] {
  const absolute = new Set(pathDirs(value, windows));
  return value.split(windows ? ";" : ":").filter((d) => d && !absolute.has(d.replace(/^"(.*)"$/, "$1")));
}

export function which(command: string, opts: WhichOptions = {}): string | undefined {
  const platform = opts.platform ?? process.platform;
  const windows = platform === "win32";
  const p = windows ? path.win32 : path.posix;
  const isExe = opts.isExecutable ?? ((f: string) => executable(f, windows));
  const names = windows
    ? windowsCandidates(command, opts.pathext ?? process.env.PATHEXT ?? DEFAULT_PATHEXT)
    : [command];
  const hasSep = command.includes("/") || (windows && command.includes("\\"));
  if (hasSep || p.isAbsolute(command)) {
    return names.map((n) => p.resolve(opts.cwd ?? process.cwd(), n)).find(isExe);
  }
  const dirs = pathDirs(opts.path ?? process.env.PATH ?? "", windows);
  for (const dir of dirs) {
    for (const n of names) {
      const f = p.join(dir, n);
      if (isExe(f)) return f;
    }
  }
  return undefined;
}
