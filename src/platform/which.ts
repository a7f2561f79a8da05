/**
 * Resolving a command the way the OS would: a path (relative to a working directory) or a name
 * looked up on PATH, with PATHEXT on Windows, so `npx` finds `npx.cmd` without a shell.
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
}

export function which(command: string, opts: WhichOptions = {}): string | undefined {
  const platform = opts.platform ?? process.platform;
  const windows = platform === "win32";
  const p = windows ? path.win32 : path.posix;
  const exts = windows
    ? ["", ...(opts.pathext ?? process.env.PATHEXT ?? ".COM;.EXE;.BAT;.CMD").split(";").filter(Boolean)]
    : [""];
  const hasSep = command.includes("/") || (windows && command.includes("\\"));
  if (hasSep || p.isAbsolute(command)) {
    const base = p.resolve(opts.cwd ?? process.cwd(), command);
    return exts.map((e) => base + e).find((f) => executable(f, windows));
  }
  const dirs = (opts.path ?? process.env.PATH ?? "").split(windows ? ";" : ":").filter(Boolean);
  for (const dir of dirs) {
    for (const e of exts) {
      const f = p.join(dir, command + e);
      if (executable(f, windows)) return f;
    }
  }
  return undefined;
}
