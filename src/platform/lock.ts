/**
 * An exclusive lock on a file, held by this process until released or until it dies: flock(2)
 * where the platform has it (Deno's `FsFile.tryLock`; libc's flock through `bun:ffi` under Bun
 * and in the compiled binary), otherwise (Windows; Node) an O_EXCL lock file holding our pid and start
 * time, taken over when its holder is gone (`pidfile_lock.ts`). Polls without blocking the event
 * loop. Bun without FFI on a platform that has flock falls back too (noted once at debug level): the
 * two kinds do not exclude each other. A lock file is never opened through a symlink (one planted
 * there would have hermit create or hold a file elsewhere): that is an error (ELOOP) naming it.
 */
import { closeSync, constants, lstatSync, openSync } from "node:fs";
import process from "node:process";
import { log } from "../log.ts";
import { tryPidfileLock } from "./pidfile_lock.ts";
import { libc } from "./libc.ts";
import { runtime } from "./runtime.ts";

export interface FileLock {
  /** How the lock is held: "flock" or "pidfile". */
  kind: "flock" | "pidfile";
  release(): void;
}

interface DenoFile {
  tryLockSync(exclusive?: boolean): boolean;
  unlockSync(): void;
  close(): void;
}
const g = globalThis as unknown as {
  Deno?: { openSync(p: string, o: { read: boolean; write: boolean; create: boolean }): DenoFile };
};

const LOCK_EX = 2;
const LOCK_NB = 4;
const LOCK_UN = 8;

/** Throw ELOOP when `path` is a symlink (where open has no O_NOFOLLOW: Deno's). */
function refuseSymlink(path: string): void {
  let link = false;
  try {
    link = lstatSync(path).isSymbolicLink();
  } catch { /* not there yet: created below */ }
  if (link) throw Object.assign(new Error(`ELOOP: a lock file is a symlink: ${path}`), { code: "ELOOP" });
}

/** Open flags of `a+`, but failing on a symlink (ELOOP). */
const OPEN_NOFOLLOW = constants.O_RDWR | constants.O_CREAT | constants.O_APPEND | (constants.O_NOFOLLOW ?? 0);

/** One attempt; undefined when someone else holds the lock. */
export async function tryLock(path: string): Promise<FileLock | undefined> {
  if (runtime === "deno" && g.Deno && process.platform !== "win32") {
    refuseSymlink(path);
    const file = g.Deno.openSync(path, { read: true, write: true, create: true });
    if (file.tryLockSync(true)) {
      return { kind: "flock", release: () => (file.unlockSync(), file.close()) };
    }
    file.close();
    return undefined;
  }
  const flock = runtime === "bun" ? libc()?.flock : undefined;
  if (flock) {
    const fd = openSync(path, OPEN_NOFOLLOW, 0o600);
    if (flock(fd, LOCK_EX | LOCK_NB) === 0) {
      return { kind: "flock", release: () => (flock(fd, LOCK_UN), closeSync(fd)) };
    }
    closeSync(fd);
    return undefined;
  }
  if (runtime === "bun" && process.platform !== "win32") noteNoFlock();
  refuseSymlink(path);
  const pidfile = tryPidfileLock(path);
  return pidfile && { kind: "pidfile", release: pidfile.release };
}

let noted = false;
/**
 * Bun without its FFI (its JIT off: a `BUN_JSC_useJIT=0`, or no memory to reserve for it under
 * `ulimit -v`) has no flock; the lock file it falls back to does not exclude hermits that hold the
 * same path with flock. Every hermit under the same limits falls back alike, so it is noted at
 * debug level, not warned about on every command.
 */
function noteNoFlock(): void {
  if (noted) return;
  noted = true;
  log.debug(
    "file locks: flock is not reachable in this process (Bun's FFI needs its JIT); using lock files, " +
      "which hermits holding the same lock with flock do not see",
  );
}

/** Wait for the lock, polling every 50 ms, up to `timeoutMs`. */
export async function acquireLock(path: string, timeoutMs: number): Promise<FileLock | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const lock = await tryLock(path);
    if (lock || Date.now() >= deadline) return lock;
    await new Promise((r) => setTimeout(r, 50));
  }
}
