/**
 * `hermit status DIR` and `hermit stop DIR`: read the endpoint file, ask the service. A stop lets
 * the service drain (it reports its bound in /health) before it is killed; a service still starting
 * (it holds `.serve/service.lock`, its endpoint not written yet) is waited for, then stopped. The
 * endpoint is read only from a `.serve/` that is the user's own (as the relay reads it): a planted
 * one would name the pid that a stop signals. A signal goes only to the process the endpoint was
 * written by, where its start time can be read.
 */
import process from "node:process";
import { Exit, HermitError } from "../errors.ts";
import { loadManifest } from "../manifest/load.ts";
import { DEFAULTS } from "../manifest/types.ts";
import { isAlive, processStartTime } from "../platform/proc.ts";
import {
  checkEndpoint,
  type Endpoint,
  fetchFor,
  removeEndpoint,
  trustedEndpoint,
  type UpstreamStatus,
} from "./endpoint.ts";
import { serviceLockHeld, waitForService } from "./launch.ts";

const STARTING = "it holds .serve/service.lock; .serve/endpoint is not written yet";
/** How long a stop waits for a service that is starting to answer. */
const STARTING_WAIT_MS = 60_000;

export interface ServiceStatus {
  running: boolean;
  /** Not running yet: a service holds the adapter and has not written its endpoint. */
  starting?: boolean;
  /** Why it is not running (no endpoint, or a stale one). */
  why?: string;
  /**
   * Running but busy: its own process (pid and start time verified) said so, or did not answer
   * `/health` in time; the details below it would have told are missing then.
   */
  busy?: string;
  url?: string;
  pid?: number;
  started_at?: string;
  uptime_s?: number;
  clients?: number;
  host_launched?: boolean;
  tools?: number;
  upstreams?: UpstreamStatus[];
}

export async function serviceStatus(dir: string): Promise<ServiceStatus> {
  const ep = trustedEndpoint(dir);
  if (!ep) {
    return await serviceLockHeld(dir)
      ? { running: false, starting: true, why: STARTING }
      : { running: false, why: "no endpoint file (.serve/endpoint)" };
  }
  const live = await checkEndpoint(ep);
  if (!live.live) return { running: false, why: `stale endpoint: ${live.why}`, url: ep.url, pid: ep.pid };
  const { health } = live;
  if (!health) {
    const uptime_s = Math.round((Date.now() - Date.parse(ep.started_at)) / 1000);
    return {
      running: true,
      busy: live.busy,
      url: ep.url,
      pid: ep.pid,
      started_at: ep.started_at,
      host_launched: ep.host_launched,
      ...(Number.isFinite(uptime_s) ? { uptime_s } : {}),
    };
  }
  return {
    running: true,
    url: ep.url,
    pid: ep.pid,
    started_at: ep.started_at,
    uptime_s: health.uptime_s,
    clients: health.clients,
    host_launched: ep.host_launched,
    tools: health.tools,
    upstreams: health.upstreams,
  };
}

export type StopResult = { stopped: true; pid: number } | { stopped: false; why: string };

/** Beyond the service's drain bound, how long a stop waits before it kills. */
const STOP_MARGIN_MS = 15_000;

/**
 * Ask the service to stop (with its token; SIGTERM when it does not take the request, e.g. busy),
 * wait for it to exit — its drain bound plus a margin for stopping its upstreams — and kill it past
 * that. An endpoint is removed only when its process is gone or its pid is another process's now:
 * never the endpoint of a process that runs as the one that wrote it.
 */
export async function stopService(dir: string): Promise<StopResult> {
  const ep = trustedEndpoint(dir) ?? await startingService(dir);
  if (!ep) return { stopped: false, why: "no service is running (no .serve/endpoint)" };
  const live = await checkEndpoint(ep);
  if (!live.live) {
    if (!live.gone) {
      return {
        stopped: false,
        why: `no service answers (${live.why}); its process ${ep.pid} still runs, so .serve/endpoint is left`,
      };
    }
    removeEndpoint(dir, ep.pid);
    return { stopped: false, why: `no service is running (removed a stale endpoint: ${live.why})` };
  }
  await requestStop(ep);
  const drainSeconds = live.health ? live.health.drain_seconds ?? 0 : configuredDrain(dir);
  const deadline = Date.now() + drainSeconds * 1000 + STOP_MARGIN_MS;
  while (isAlive(ep.pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (isAlive(ep.pid)) {
    signal(ep, "SIGKILL");
    removeEndpoint(dir, ep.pid);
  }
  return { stopped: true, pid: ep.pid };
}

/** The adapter's `serve.drain_seconds`, for a busy service that did not report it. */
function configuredDrain(dir: string): number {
  try {
    return loadManifest(dir).serve.drainSeconds;
  } catch {
    return DEFAULTS.drainSeconds;
  }
}

/** Signal the endpoint's process, unless its pid now belongs to another process. */
function signal(ep: Endpoint, sig: NodeJS.Signals): void {
  const start = ep.process_start ? processStartTime(ep.pid) : undefined;
  if (start && start !== ep.process_start) return;
  try {
    process.kill(ep.pid, sig);
  } catch { /* gone */ }
}

async function requestStop(ep: Endpoint): Promise<void> {
  try {
    // as the relay does: a loopback service directly, never through HTTP_PROXY (the token)
    const res = await fetchFor(ep.url)(new URL("/hermit/stop", ep.url).href, {
      method: "POST",
      headers: { authorization: `Bearer ${ep.token}` },
      signal: AbortSignal.timeout(3000),
    });
    if (res.status === 202) return;
  } catch { /* fall back to a signal */ }
  signal(ep, "SIGTERM");
}

/** A service that is starting, once it answers (its endpoint); undefined when none is starting. */
async function startingService(dir: string): Promise<Endpoint | undefined> {
  if (!(await serviceLockHeld(dir))) return undefined;
  const ep = await waitForService(dir, STARTING_WAIT_MS);
  if (ep) return ep;
  if (await serviceLockHeld(dir)) {
    throw new HermitError(
      `a service for ${dir} is starting (${STARTING}) and has not answered within ${
        STARTING_WAIT_MS / 1000
      } s; stop it once it is up`,
      Exit.unexpected,
    );
  }
  return undefined;
}
