/**
 * What the sandbox reads of files an entry may have written (the workspace's repository, a
 * user's `~/.npmrc`) before it starts the next one: small texts only, read without blocking, and
 * directories listed with a budget, so nothing planted there (a FIFO, a link to /dev/zero, a
 * million directories) stalls a start. And the one thing it makes there: a repository's missing
 * `hooks` directory, so that it can be kept read-only like one that exists.
 */
import { type Dir, existsSync, lstatSync, mkdirSync, opendirSync } from "node:fs";
import path from "node:path";
import { readTextCapped } from "../platform/read_capped.ts";
import { gitModulesIn } from "./runs_later.ts";

/** Entries read from one directory at most. */
export const ENTRIES_READ = 1000;

/**
 * A small text file (at most 64 KiB), if it is one: not a FIFO (which would block), a link to
 * /dev/zero (endless) or larger. Read at every start (it may change).
 */
export function readSmallText(file: string): string | undefined {
  try {
    return readTextCapped(file, 64 * 1024);
  } catch {
    return undefined;
  }
}

/** The subdirectories of `dir` among its first ENTRIES_READ entries (links not followed). */
export function subdirectories(dir: string): string[] | undefined {
  let d: Dir | undefined;
  try {
    d = opendirSync(dir);
    const names: string[] = [];
    for (let read = 0, e = d.readSync(); e && read < ENTRIES_READ; read++, e = d.readSync()) {
      if (e.isDirectory()) names.push(e.name);
    }
    return names;
  } catch {
    return undefined;
  } finally {
    d?.closeSync();
  }
}

/** The submodules' git directories under `modules` (a repository's `.git/modules`). */
export function submodules(modules: string): string[] {
  return gitModulesIn(
    (rel) => subdirectories(path.join(modules, rel)),
    (rel) => existsSync(path.join(modules, rel, "HEAD")),
  );
}

/**
 * Make each of `paths` that is a missing `hooks` directory of a git directory (one holding a
 * `HEAD` file; links not followed): git runs what lands there, and only a path that exists can be
 * covered by a read-only mount. Empty directories are what git's own templates make there.
 */
export function makeMissingHooks(paths: readonly string[]): void {
  const kind = (p: string) => {
    try {
      const st = lstatSync(p);
      return st.isDirectory() ? "dir" : st.isFile() ? "file" : "other";
    } catch {
      return undefined;
    }
  };
  for (const p of paths) {
    const gitDir = path.dirname(p);
    if (path.basename(p) !== "hooks" || kind(p) !== undefined) continue;
    if (kind(gitDir) !== "dir" || kind(path.join(gitDir, "HEAD")) !== "file") continue;
    try {
      mkdirSync(p, { mode: 0o755 });
    } catch { /* left as it is: the entry can make it, as before */ }
  }
}
