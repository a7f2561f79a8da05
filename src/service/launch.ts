/**
 * Finding the running service for an adapter, or starting one. A service is started detached (its
 * own session, logs in `DIR/.serve/log`) and is ready once its endpoint answers. Relays launch
 * under `DIR/.serve/lock`, re-reading the endpoint after taking it, so however many race, exactly
 * one service starts. An untrustworthy `.serve/` or endpoint file is refused before anything is
 * read from it or sent anywhere. Also the one-line messages about it (none running, one already
 * running), naming the directory as the user would type it.
 */
import { spawn } from "node:child_process";
import { closeSync, existsSync, readFileSync } from "node:fs";
import process from "node:process";
import { Exit, HermitError } from "../errors.ts";
import { log } from "../log.ts";
import type { Manifest } from "../manifest/types.ts";
import { acquireLock, type FileLock, tryLock } from "../platform/lock.ts";
import { selfCommand } from "../platform/runtime.ts";
import { sleep } from "../process/wait.ts";
import { whileWaiting } from "../progress.ts";
import { checkEndpoint, type Endpoint, findService, readEndpoint } from "./endpoint.ts";
import { alreadyRunningError, shownDir } from "./messages.ts";
import {
  checkTrusted,
  ensureServeDir,
  lockPath,
  logPath,
  openServeLog,
  serviceLockPath,
} from "./serve_dir.ts";

export { findService } from "./endpoint.ts";
export { alreadyRunningError, noServiceMessage, shownDir } from "./messages.ts";

const LAUNCH_TIMEOUT_MS = 120_000;

/** Start `hermit serve DIR --standalone` detached; resolves once its endpoint answers. */
export async function launchDetached(
  m: Manifest,
  hostLaunched: boolean,
  serviceArgs: string[] = [],
  timeoutMs = LAUNCH_TIMEOUT_MS,
): Promise<Endpoint> {
  const logFile = logPath(m.dir);
  const fd = openServeLog(m.dir);
  const [cmd, ...pre] = selfCommand();
  const args = [
    ...pre,
    "serve",
    m.dir,
    "--standalone",
    ...serviceArgs,
    ...(hostLaunched ? ["--host-launched"] : []),
  ];
  const child = spawn(cmd, args, {
    cwd: m.dir,
    detached: true,
    stdio: ["ignore", fd, fd],
    env: { ...process.env, HERMIT_LOG_TIMESTAMPS: "1" } as Record<string, string>,
    windowsHide: true,
  });
  closeSync(fd);
  child.unref();
  let exited: string | undefined;
  child.once("exit", (code, signal) => (exited = signal ?? `exit ${code}`));
  child.once("error", (err) => (exited = err.message));
  // the one place a relay (or `--daemon`) waits for a service it launched
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ep = readEndpoint(m.dir);
    if (ep && ep.pid === child.pid && (await checkEndpoint(ep)).live) return ep;
    if (exited) break;
    await sleep(100);
  }
  const tail = logTail(logFile, 3);
  if (!exited) {
    try {
      process.kill(child.pid!, "SIGTERM");
    } catch { /* gone */ }
  }
  throw new HermitError(
    `the ${m.name} service did not start (${exited ?? `no answer within ${timeoutMs / 1000} s`})${
      tail ? `: ${tail}` : ""
    }; see ${logFile}`,
    Exit.unexpected,
  );
}

/**
 * The running service, launching one under the lock when allowed. Undefined when none runs and
 * launching is not allowed.
 */
export async function findOrLaunch(m: Manifest, allowLaunch: boolean): Promise<Endpoint | undefined> {
  const found = await findService(m.dir);
  if (found || !allowLaunch) return found;
  const got = await launchUnderLock(m, true);
  return got.endpoint;
}

/**
 * Under `DIR/.serve/lock`: the service someone else started meanwhile (`launched: false`), or one
 * this call started with `serviceArgs`. A service started by hand in the foreground takes no
 * launch lock; when it wins the race, ours exits "already running" and the winner is returned.
 */
export async function launchUnderLock(
  m: Manifest,
  hostLaunched: boolean,
  serviceArgs: string[] = [],
  timeoutMs = LAUNCH_TIMEOUT_MS,
): Promise<{ endpoint: Endpoint; launched: boolean }> {
  ensureServeDir(m.dir); // the lock lives in it
  checkTrusted(lockPath(m.dir), "file"); // never opened through a symbolic link
  const lock = await acquireLock(lockPath(m.dir), timeoutMs);
  if (!lock) {
    throw new HermitError(
      `timed out waiting for ${lockPath(m.dir)} (another hermit is starting the service)`,
      Exit.unexpected,
    );
  }
  try {
    const again = await findService(m.dir);
    if (again) return { endpoint: again, launched: false };
    // a host's log says why the session waits; `--daemon` prints where it runs once it does
    if (hostLaunched) log.info(`starting the ${m.name} service (logs in ${logPath(m.dir)})`);
    try {
      const endpoint = await whileWaiting(
        `the ${m.name} service to start (its log: ${logPath(m.dir)})`,
        launchDetached(m, hostLaunched, serviceArgs, timeoutMs),
      );
      return { endpoint, launched: true };
    } catch (err) {
      const winner = await waitForService(m.dir, timeoutMs);
      if (winner) return { endpoint: winner, launched: false };
      throw err;
    }
  } finally {
    lock.release();
  }
}

/**
 * Claim the adapter for this service (`DIR/.serve/service.lock`, held until the process exits), or
 * refuse with one line when another service for it is starting or running — however many were
 * started at once (by hand, `--daemon`, relays), one runs.
 */
export async function claimService(m: Manifest): Promise<FileLock> {
  ensureServeDir(m.dir);
  checkTrusted(serviceLockPath(m.dir), "file"); // never opened through a symbolic link
  // the holder may be a look (`status`, `stop`, a relay asking whether one is starting), which
  // lets go at once: try again until another service answers or the wait is over
  const deadline = Date.now() + CLAIM_WAIT_MS;
  for (;;) {
    const lock = await tryLock(serviceLockPath(m.dir));
    if (lock) return lock;
    const other = await findService(m.dir);
    if (other) throw alreadyRunningError(m, other);
    if (Date.now() >= deadline) break;
    await sleep(100);
  }
  throw new HermitError(
    `a service for ${m.name} is already starting (it holds ${serviceLockPath(m.dir)}); see 'hermit status ${
      shownDir(m)
    }'`,
    Exit.usage,
  );
}

/** How long a service waits for the adapter, or for the other service's endpoint to say where it runs. */
const CLAIM_WAIT_MS = 5_000;

/**
 * The service another process is starting or running for the adapter `dir`, once it answers; undefined
 * when none is (nobody holds its lock) or it does not answer within `timeoutMs`.
 */
export async function waitForService(dir: string, timeoutMs: number): Promise<Endpoint | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ep = await findService(dir);
    if (ep) return ep;
    if (Date.now() >= deadline || !(await serviceLockHeld(dir))) return undefined;
    await sleep(100);
  }
}

/** Does a service hold the adapter (starting, or running and not yet draining)? */
export async function serviceLockHeld(dir: string): Promise<boolean> {
  if (!existsSync(serviceLockPath(dir))) return false; // a holder keeps the file while it holds
  checkTrusted(serviceLockPath(dir), "file");
  const probe = await tryLock(serviceLockPath(dir));
  probe?.release();
  return probe === undefined;
}

function logTail(file: string, n: number): string {
  try {
    return readFileSync(file, "utf8").trim().split("\n").slice(-n).join(" | ");
  } catch {
    return "";
  }
}
