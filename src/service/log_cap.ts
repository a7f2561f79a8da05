/**
 * A cap on `DIR/.serve/log`. A detached service's stderr is that file (opened for appending by
 * whoever launched it); once it holds `maxBytes`, its content moves to `log.1` (replacing the one
 * before) and the file starts over, so the two never hold much more than twice the cap. Neither
 * path is followed if it is a symlink. Checked on a timer: nothing is counted per line.
 */
import {
  closeSync,
  constants,
  fstatSync,
  ftruncateSync,
  openSync,
  readSync,
  statSync,
  writeSync,
} from "node:fs";
import { log } from "../log.ts";

export const LOG_MAX_BYTES = 8 * 1024 * 1024;
const CHECK_MS = 1000;
const STDERR = 2;

/** Keep `logFile` under the cap while stderr is that file; a no-op when stderr is anything else. */
export function capLog(logFile: string, maxBytes = LOG_MAX_BYTES): () => void {
  let ours: boolean;
  try {
    const err = fstatSync(STDERR);
    const fd = openSync(logFile, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      const file = fstatSync(fd);
      ours = err.isFile() && err.ino === file.ino && err.dev === file.dev;
    } finally {
      closeSync(fd);
    }
  } catch {
    ours = false;
  }
  if (!ours) return () => {};
  const timer = setInterval(() => {
    try {
      if (fstatSync(STDERR).size >= maxBytes) rotate(logFile);
    } catch (err) {
      log.debug(`log cap: ${(err as Error).message}`);
    }
  }, CHECK_MS);
  (timer as { unref?: () => void }).unref?.();
  return () => clearInterval(timer);
}

function rotate(logFile: string): void {
  const from = openSync(logFile, constants.O_RDONLY | constants.O_NOFOLLOW);
  const to = openSync(
    `${logFile}.1`,
    constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    const buf = Buffer.alloc(1024 * 1024);
    for (let n = readSync(from, buf); n > 0; n = readSync(from, buf)) writeSync(to, buf, 0, n);
  } finally {
    closeSync(from);
    closeSync(to);
  }
  // appending writers (this process, its watchdog) go on at the new end
  ftruncateSync(STDERR, 0);
  log.info(
    `log rotated: the previous ${Math.round(statSync(`${logFile}.1`).size / 1024)} KiB are in ${logFile}.1`,
  );
}
