/**
 * Replacing one of hermit's own private files (OAuth credentials, the schema cache, the service
 * endpoint) atomically: a temporary file next to it, created exclusively with the given mode
 * (owner-only by default, whatever the umask), written and fsynced, then renamed over the
 * target. A reader, in this process or another, sees the old file or the new one, never half of
 * one; when anything fails the temporary file is removed and the target is left as it was.
 * Deploy's writes into users' files have their own rules (`hosts/files.ts`).
 */
import { closeSync, fchmodSync, fsyncSync, openSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";

/** 8 random hex digits (Web Crypto, which every runtime has without loading `node:crypto`). */
function randomHex(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(4));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Write `data` to `file` atomically, as a file of mode `mode` (default 0600). */
export function writeFileAtomic(file: string, data: string | Uint8Array, mode = 0o600): void {
  const tmp = path.join(
    path.dirname(file),
    `.${path.basename(file)}.${process.pid}.${randomHex()}.tmp`,
  );
  const fd = openSync(tmp, "wx", mode);
  try {
    try {
      if (process.platform !== "win32") fchmodSync(fd, mode); // whatever the umask says
      writeFileSync(fd, data); // all of it, however many writes that takes
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}
