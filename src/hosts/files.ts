/**
 * The only code that writes users' files for deploy and convert: atomic replacement (hermit's one
 * atomic-write helper, in its users'-files form: the old file's mode kept, a symlink followed to
 * its target), the directories a write had to create (so `--remove` can take them away again),
 * a backup copy of what was there (hermit's own files: never through a link), and deletion. What
 * it reads is only ever a regular file: a FIFO, a socket or a device is refused before it could
 * block the run (`NotAFile`), and a link to nothing is refused rather than taken for no file.
 */
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmdirSync,
  type Stats,
  statSync,
  unlinkSync,
} from "node:fs";
import path from "node:path";
import { danglingLinkOn, replacedPath, writeFileAtomic } from "../platform/atomic_write.ts";

/** Something at a file's place that is not a regular file (nor a folder): reading it may block. */
export class NotAFile extends Error {
  constructor(readonly file: string, readonly kind: string) {
    super(`${file}: not a regular file (${kind})`);
    this.name = "NotAFile";
  }
}

/** What `st` is when it is neither a regular file nor a folder. Pure. */
function oddKind(st: Stats): string | undefined {
  if (st.isFile() || st.isDirectory()) return undefined;
  if (st.isFIFO()) return "a FIFO";
  if (st.isSocket()) return "a socket";
  if (st.isCharacterDevice()) return "a character device";
  if (st.isBlockDevice()) return "a block device";
  return "not a file";
}

/** The check both before opening and on the open file (a swap in between cannot block the read). */
function refuseOdd(file: string, st: Stats): void {
  const kind = oddKind(st);
  if (kind) throw new NotAFile(file, kind);
  if (st.isDirectory()) {
    throw Object.assign(new Error(`EISDIR: illegal operation on a directory, read '${file}'`), {
      code: "EISDIR",
    });
  }
}

/**
 * The bytes of the regular file `file` (a link followed); undefined when there is none. A FIFO,
 * socket or device is `NotAFile`, a link to nothing (`file`, or a folder on its way) `DanglingLink`,
 * a folder EISDIR. Opened without blocking, and checked again once open.
 */
export function readBytes(file: string): Uint8Array | undefined {
  let fd: number;
  try {
    refuseOdd(file, statSync(file));
    fd = openSync(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" && code !== "ENOTDIR") throw err;
    const dangling = danglingLinkOn(file);
    if (dangling) throw dangling;
    return undefined;
  }
  try {
    refuseOdd(file, fstatSync(fd));
    return new Uint8Array(readFileSync(fd));
  } finally {
    closeSync(fd);
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
