/**
 * Writing hermit.yaml and hermit.lock at the end of a run that took a while (`hermit add` starts
 * its entry, `hermit lock` every server): one writer at a time on this machine (a lock in hermit's
 * state directory), and the run's plan is held against the files as they are by then — another
 * `hermit add` or an edit may have landed meanwhile, and writing what was read at the start would
 * silently undo it.
 */
import { readFileSync } from "node:fs";
import process from "node:process";
import { Exit, HermitError } from "../errors.ts";
import { homeDir, stateDir } from "../platform/paths.ts";
import { stateLock } from "../platform/state_lock.ts";
import { STOP_SIGNALS } from "../process/host_end.ts";
import type { Lock, LockState } from "./types.ts";

/** How long a write waits for another hermit's (they take milliseconds). */
const WRITE_LOCK_MS = 30_000;

/**
 * Run `write` holding the machine's adapter-write lock. A Ctrl-C (SIGTERM, SIGHUP) meanwhile is
 * held until both files are written, then ends the process as it would have: a kill between the
 * two would leave hermit.yaml with an entry hermit.lock does not have.
 */
export async function whileWriting<T>(write: () => T): Promise<T> {
  const dir = stateDir(process.platform, process.env, homeDir());
  const lock = await stateLock(
    dir,
    "adapter-write.lock",
    WRITE_LOCK_MS,
    "another hermit is writing an adapter",
  );
  const held: NodeJS.Signals[] = [];
  const hold = (signal: NodeJS.Signals) => void held.push(signal);
  for (const s of STOP_SIGNALS) process.on(s, hold);
  try {
    return write();
  } finally {
    lock.release();
    // a signal that came during the (synchronous) write is handled a turn of the loop later (Deno: a timer's)
    await new Promise((r) => setTimeout(r, 20));
    for (const s of STOP_SIGNALS) process.off(s, hold);
    if (held.length) {
      process.kill(process.pid, held[0]);
      await new Promise(() => setInterval(() => {}, 1000)); // nothing after the write runs
    }
  }
}

/**
 * hermit.yaml as it is at the write (`file`, shown as `shown`); one removed or made unreadable
 * since the run began is an error naming it, and nothing is written.
 */
export function readAtWrite(file: string, shown: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? "error";
    throw new HermitError(
      `${shown} was removed or made unreadable (${code}) while its servers ran; nothing written`,
      Exit.problems,
    );
  }
}

/**
 * `hermit add` into an adapter whose hermit.lock exists but cannot be used (a merge conflict, a
 * hand-edited entry, a FIFO): refused, exit 3, before anything is written — locking every server
 * anew would approve, unseen, whatever changed since the last lock. Only a missing lock means
 * "lock everything". `shown`: the lock as the user names it; `lockCmd`: the command that rewrites it.
 */
export function refuseUnusableLock(state: LockState, shown: string, lockCmd: string): void {
  if (state.kind !== "invalid") return;
  throw new HermitError(
    `${shown} cannot be read (${state.why}): fix it or run '${lockCmd}' first; nothing was changed`,
    Exit.problems,
  );
}

/**
 * Pure: the lock to write after a run that locked `server`: the lock on disk now with that
 * server's entry from the run (entries another writer added meanwhile kept), or the run's whole
 * lock when there is no lock on disk (an unusable one is refused before: `refuseUnusableLock`).
 */
export function lockWithServer(now: LockState, ran: Lock, server: string): Lock {
  if (now.kind !== "ok") return ran;
  const ours = Object.entries(ran.servers).filter(([name]) => name === server);
  const servers = Object.fromEntries([
    ...Object.entries(ran.servers),
    ...Object.entries(now.lock.servers),
    ...ours,
  ]);
  return { ...now.lock, servers };
}
