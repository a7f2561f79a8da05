/**
 * The lock where there is no flock (Windows, or a runtime without FFI): an O_EXCL lock file
 * holding the holder's pid and start time. It is taken over only when that holder is gone, and
 * the takeover is itself exclusive, so two processes that both find the same stale holder cannot
 * both end up holding the lock:
 *  - a lock file without a readable holder (just created, its pid not yet written) counts as held
 *    until it is ABANDONED_MS old;
 *  - to remove a stale lock file a process must first create the takeover marker named after that
 *    file's content (O_EXCL: one winner per stale holder), then re-read the lock file and remove
 *    it only if it still holds the same stale holder. A process that judged the holder stale
 *    earlier finds a new holder in it and backs off.
 * A marker is removed right after use; one left by a crash mid-takeover is removed once it is
 * ABANDONED_MS old.
 */
import { sha256Hex } from "./sha256.ts";
import { closeSync, fstatSync, openSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import process from "node:process";
import { isAlive, processStartTime } from "./proc.ts";

/** A lock file with no holder written in it, or a takeover marker, this old was left by a crash. */
export const ABANDONED_MS = 10_000;

interface Seen {
  content: string;
  ageMs: number;
}

/** The file's content and age, read through one descriptor; undefined when it is not there. */
function readSeen(path: string): Seen | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    const ageMs = Date.now() - fstatSync(fd).mtimeMs;
    return { content: readFileSync(fd, "utf8"), ageMs };
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Create `path` holding `content`, failing when it exists (or cannot be created now). */
function createExclusive(path: string, content: string): boolean {
  try {
    writeFileSync(path, content, { flag: "wx", mode: 0o600 });
    return true;
  } catch {
    return false;
  }
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch { /* already gone */ }
}

/** Is the holder named in a lock file gone (dead, or its pid reused by a later process)? */
function holderGone(seen: Seen): boolean {
  const m = /^(\d+) ?(\S*)$/.exec(seen.content.trim());
  if (!m) return seen.ageMs > ABANDONED_MS; // being written (or garbage): held until it is old
  const pid = Number(m[1]);
  const startNow = processStartTime(pid);
  if (startNow === undefined) return !isAlive(pid);
  return m[2] !== "" && startNow !== m[2];
}

/** The takeover marker for the lock file `path` while it names the holder `content`. */
export function takeoverMarker(path: string, content: string): string {
  return `${path}.takeover-${sha256Hex(content).slice(0, 16)}`;
}

/** Remove the lock file if it still holds the stale holder `seen`; true when it is gone. */
function takeOver(path: string, seen: Seen, me: string): boolean {
  const marker = takeoverMarker(path, seen.content);
  if (!createExclusive(marker, me)) {
    const left = readSeen(marker);
    if (left && left.ageMs > ABANDONED_MS) removeQuietly(marker);
    return false; // someone else is taking over this holder's lock
  }
  try {
    const now = readSeen(path);
    if (!now) return true;
    if (now.content !== seen.content || !holderGone(now)) return false;
    unlinkSync(path);
    return true;
  } catch {
    return false;
  } finally {
    removeQuietly(marker);
  }
}

/** One attempt at the lock file `path`; undefined while a live process holds it. */
export function tryPidfileLock(path: string): { release(): void } | undefined {
  const me = `${process.pid} ${processStartTime(process.pid) ?? ""}`;
  for (let attempt = 0; attempt < 2; attempt++) {
    if (createExclusive(path, me)) {
      return {
        release: () => {
          if (readSeen(path)?.content === me) removeQuietly(path);
        },
      };
    }
    const seen = readSeen(path);
    if (!seen) continue; // released meanwhile
    if (!holderGone(seen) || !takeOver(path, seen, me)) return undefined;
  }
  return undefined;
}
