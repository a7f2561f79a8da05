/**
 * The one way hermit replaces a file, its own private ones (OAuth credentials, the schema cache,
 * the service endpoint) and users' files (deploy, convert) alike: a temporary file next to the
 * target, created exclusively, written whole (short writes continued, a write that makes no
 * progress is an error), fsynced, then renamed over the target. A reader, in this process or
 * another, sees the old file or the new one, never half of one; when anything fails the temporary
 * file is removed (none is left in the user's folder) and the target is left as it was.
 *
 * Private files get their mode (0600 by default) whatever the umask. A user's file (`preserve`)
 * keeps the mode, owner and group it had (the owner as far as the process may give it) and is
 * written through a symlink to its target; a new one gets `mode` under the user's umask. A link to
 * nothing (the file, or a folder on its way) is refused: replacing it with a plain file would
 * lose the user's link.
 */
import {
  closeSync,
  fchmodSync,
  fchownSync,
  fsyncSync,
  lstatSync,
  openSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import path from "node:path";
import process from "node:process";
import { Exit, HermitError } from "../errors.ts";

/** 8 random hex digits (Web Crypto, which every runtime has without loading `node:crypto`). */
function randomHex(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(4));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The file operations a write uses; tests inject failing ones. */
export interface AtomicIo {
  writeSync(fd: number, data: Uint8Array, offset: number, length: number): number;
  fsyncSync(fd: number): void;
  renameSync(from: string, to: string): void;
}

const nodeIo: AtomicIo = {
  writeSync: (fd, data, offset, length) => writeSync(fd, data, offset, length),
  fsyncSync,
  renameSync,
};

export interface AtomicWriteOptions {
  /** The mode of a new file (and of every private file); default 0600. */
  mode?: number;
  /** A user's file: keep the mode of the file replaced, and replace a symlink's target, not the link. */
  preserve?: boolean;
  io?: AtomicIo;
}

/** A link whose target does not exist, where hermit would write through it (bad input, exit 2). */
export class DanglingLink extends HermitError {
  constructor(readonly link: string, readonly target: string) {
    super(
      `${link} is a link to ${target}, which does not exist: create it (or remove the link) and run again`,
      Exit.usage,
    );
  }
}

/**
 * The link to nothing that `file` (missing) would be written through: `file` itself or the nearest
 * existing folder on its way, when that is a link whose target does not exist.
 */
export function danglingLinkOn(file: string): DanglingLink | undefined {
  for (let p = path.resolve(file);; p = path.dirname(p)) {
    let isLink: boolean;
    try {
      isLink = lstatSync(p).isSymbolicLink();
    } catch {
      if (path.dirname(p) === p) return undefined;
      continue; // missing: look at its folder
    }
    if (!isLink) return undefined;
    try {
      statSync(p);
      return undefined; // leads somewhere
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") return undefined; // a loop: said on writing
      return new DanglingLink(p === path.resolve(file) ? file : p, readlinkSync(p));
    }
  }
}

/**
 * What a write to `file` replaces: the symlink's target when `file` is one, else `file` (a new
 * file). A link to nothing is refused (`DanglingLink`).
 */
export function replacedPath(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    const dangling = danglingLinkOn(file);
    if (dangling) throw dangling;
    return file;
  }
}

export class ShortWrite extends Error {
  constructor(file: string, written: number, total: number) {
    super(`writing ${file} stopped after ${written} of ${total} bytes`);
    this.name = "ShortWrite";
  }
}

/** Write `data` to `file` atomically (see the module comment). */
export function writeFileAtomic(
  file: string,
  data: string | Uint8Array,
  opts: AtomicWriteOptions = {},
): void {
  const io = opts.io ?? nodeIo;
  const target = opts.preserve ? replacedPath(file) : file;
  let mode = opts.mode ?? 0o600;
  let forceMode = !opts.preserve;
  let owner: { uid: number; gid: number } | undefined;
  if (opts.preserve) {
    try {
      const st = statSync(target);
      mode = st.mode & 0o7777;
      forceMode = true; // the existing file's mode, exactly
      if (st.uid !== process.getuid?.() || st.gid !== process.getgid?.()) owner = st;
    } catch { /* a new file: the umask applies */ }
  }
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  const tmp = path.join(
    path.dirname(target),
    `.${path.basename(target)}.hermit-${process.pid}-${randomHex()}.tmp`,
  );
  const fd = openSync(tmp, "wx", mode);
  try {
    try {
      if (owner && process.platform !== "win32") keepOwner(fd, owner);
      if (forceMode && process.platform !== "win32") fchmodSync(fd, mode); // after: chown clears setuid
      for (let done = 0; done < bytes.length;) {
        const n = io.writeSync(fd, bytes, done, bytes.length - done);
        if (!(n > 0)) throw new ShortWrite(target, done, bytes.length);
        done += n;
      }
      io.fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    io.renameSync(tmp, target);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/**
 * Give the new file the replaced one's owner and group. Only root may give a file away (a user
 * may still set a group they belong to); when that is refused, the writer owns it, as before.
 */
function keepOwner(fd: number, owner: { uid: number; gid: number }): void {
  try {
    fchownSync(fd, owner.uid, owner.gid);
  } catch {
    try {
      fchownSync(fd, -1, owner.gid);
    } catch { /* EPERM: the writer's own group stays */ }
  }
}
