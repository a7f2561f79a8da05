/**
 * The only code that writes users' files for deploy and convert: atomic replacement (a temporary
 * file in the same directory, then rename, keeping the old file's mode and following a symlink to
 * its target), the directories a write had to create (so `--remove` can take them away again),
 * a backup copy of what was there, and deletion.
 */
import {
  closeSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmdirSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import path from "node:path";
import process from "node:process";

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

/** Write `content` to `file` atomically; returns the directories that had to be created. */
export function writeAtomic(file: string, content: Uint8Array, mode?: number): string[] {
  let target = file;
  let keepMode = mode;
  try {
    target = realpathSync(file);
    keepMode = statSync(target).mode & 0o7777;
  } catch { /* a new file */ }
  const created = makeDirs(path.dirname(target));
  const temp = path.join(
    path.dirname(target),
    `.${path.basename(target)}.hermit-${process.pid}-${Math.random().toString(36).slice(2, 8)}.tmp`,
  );
  const fd = openSync(temp, "wx", keepMode ?? 0o644);
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(temp, target);
  } catch (err) {
    try {
      unlinkSync(temp);
    } catch { /* gone */ }
    throw err;
  }
  return created;
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
