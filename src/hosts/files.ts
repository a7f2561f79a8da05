/**
 * The only code that writes users' files for deploy and convert: atomic replacement (hermit's one
 * atomic-write helper, in its users'-files form: the old file's mode kept, a symlink followed to
 * its target), the directories a write had to create (so `--remove` can take them away again),
 * a backup copy of what was there (hermit's own files: never through a link), and deletion.
 */
import { lstatSync, mkdirSync, readFileSync, rmdirSync, unlinkSync } from "node:fs";
import path from "node:path";
import { replacedPath, writeFileAtomic } from "../platform/atomic_write.ts";

export function readBytes(file: string): Uint8Array | undefined {
  try {
    return new Uint8Array(readFileSync(file));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw err;
  }
}

export function exists(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

/** Create `dir` and its missing parents; returns the ones created, outermost first. */
export function makeDirs(dir: string): string[] {
  const missing: string[] = [];
  for (let d = dir; !exists(d); d = path.dirname(d)) {
    missing.unshift(d);
    if (path.dirname(d) === d) break;
  }
  if (missing.length) mkdirSync(dir, { recursive: true });
  return missing;
}

/**
 * Write `content` to `file` atomically, keeping its mode and following a symlink to its target;
 * returns the directories that had to be created. A new file gets `mode` (default 0644) under the
 * umask.
 */
export function writeAtomic(file: string, content: Uint8Array, mode = 0o644): string[] {
  const created = makeDirs(path.dirname(replacedPath(file)));
  writeFileAtomic(file, content, { mode, preserve: true });
  return created;
}

/**
 * Write one of hermit's own files (its record, a backup, `.gitignore`) atomically with `mode`
 * exactly: a link at `file` is replaced, never followed to its target.
 */
export function writeOwn(file: string, content: Uint8Array, mode = 0o600): void {
  makeDirs(path.dirname(file));
  writeFileAtomic(file, content, { mode });
}

export function removeFile(file: string): void {
  try {
    unlinkSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
}

/** Remove `dir` when it is empty; true when it is gone (removed now or missing already). */
export function removeEmptyDir(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ENOENT";
  }
}
