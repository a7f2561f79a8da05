/**
 * What the sandbox reads of files an entry may have written (the workspace's repository, a
 * user's `~/.npmrc`) before it starts the next one: small texts only, read without blocking, and
 * directories listed with a budget, so nothing planted there (a FIFO, a link to /dev/zero, a
 * million directories) stalls a start.
 */
import { type Dir, existsSync, opendirSync } from "node:fs";
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
