/**
 * Finding the running service for an adapter, or starting one. A service is started detached (its
 * own session, logs in `DIR/.serve/log`) and is ready once its endpoint answers. Relays launch
 * under `DIR/.serve.lock`, re-reading the endpoint after taking it, so however many race, exactly
 * one service starts. Also the one-line messages about it (none running, one already running),
 * naming the directory as the user would type it.
 */
import { spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { Exit, HermitError } from "../errors.ts";
import { log } from "../log.ts";
import { displayPath } from "../manifest/load.ts";
import type { Manifest } from "../manifest/types.ts";
import { acquireLock } from "../platform/lock.ts";
import { selfCommand } from "../platform/runtime.ts";
import { sleep } from "../process/wait.ts";
import { whileWaiting } from "../progress.ts";
import { checkEndpoint, type Endpoint, ensureServeDir, lockPath, logPath, readEndpoint } from "./endpoint.ts";

const LAUNCH_TIMEOUT_MS = 120_000;

/** The live endpoint of the adapter's service, if one runs. */
export async function findService(dir: string): Promise<Endpoint | undefined> {
  const ep = readEndpoint(dir);
  if (!ep) return undefined;
  const live = await checkEndpoint(ep);
  if (!live.live) log.debug(`stale endpoint in ${dir}/.serve: ${live.why}`);
  return live.live ? ep : undefined;
}

/** Start `hermit serve DIR --standalone` detached; resolves once its endpoint answers. */
export async function launchDetached(
  m: Manifest,
  hostLaunched: boolean,
  serviceArgs: string[] = [],
  timeoutMs = LAUNCH_TIMEOUT_MS,
): Promise<Endpoint> {
  ensureServeDir(m.dir);
  const logFile = logPath(m.dir);
  const fd = openSync(logFile, "a", 0o600);
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
  const lock = await acquireLock(lockPath(m.dir), LAUNCH_TIMEOUT_MS);
  if (!lock) {
    throw new HermitError(
      `timed out waiting for ${lockPath(m.dir)} (another hermit is starting the service)`,
      Exit.unexpected,
    );
  }
  try {
    const again = await findService(m.dir);
    if (again) return again;
    log.info(`starting the ${m.name} service (logs in ${logPath(m.dir)})`);
    return await whileWaiting(
      `the ${m.name} service to start (its log: ${logPath(m.dir)})`,
      launchDetached(m, true),
    );
  } finally {
    lock.release();
  }
}

/** The adapter directory as a user here would type it: "." for the working directory. */
export function shownDir(m: Manifest): string {
  return path.resolve(m.dir) === process.cwd() ? "." : displayPath(m.dir);
}

/** Refusing a second service for the adapter: where the first one runs, and how to stop it. */
export function alreadyRunningError(m: Manifest, running: Endpoint): HermitError {
  return new HermitError(
    `a service for ${m.name} is already running at ${running.url} (pid ${running.pid}); stop it with 'hermit stop ${
      shownDir(m)
    }'`,
    Exit.usage,
  );
}

export function noServiceMessage(m: Manifest): string {
  const instructions = m.serve.instructions ? `, see ${m.serve.instructions}` : "";
  return `no service is running for ${m.name}; start it with 'hermit serve ${
    shownDir(m)
  } --standalone'${instructions}`;
}

function logTail(file: string, n: number): string {
  try {
    return readFileSync(file, "utf8").trim().split("\n").slice(-n).join(" | ");
  } catch {
    return "";
  }
}
