/**
 * A machine-wide lock in hermit's state directory (`deploy.lock`, `adapter-write.lock`): the
 * directory made when missing, and what keeps the lock from being taken said in one line.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import { HermitError } from "../errors.ts";
import { acquireLock, type FileLock } from "./lock.ts";

/** Take `<stateDir>/<name>`, waiting up to `timeoutMs`; `busy` says who holds it when the wait ends. */
export async function stateLock(
  stateDir: string,
  name: string,
  timeoutMs: number,
  busy: string,
): Promise<FileLock> {
  const file = path.join(stateDir, name);
  try {
    mkdirSync(stateDir, { recursive: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? "error";
    throw new HermitError(`cannot create hermit's state directory ${stateDir} (${code}); set HERMIT_HOME`);
  }
  let lock: FileLock | undefined;
  try {
    lock = await acquireLock(file, timeoutMs);
  } catch (err) {
    // not a lock file hermit made (a folder, a symlink) or not this user's to open
    const code = (err as NodeJS.ErrnoException).code ?? "error";
    throw new HermitError(`cannot open the lock ${file} (${code}); remove it`);
  }
  if (!lock) throw new HermitError(`${busy} (lock ${file}); try again`);
  return lock;
}
