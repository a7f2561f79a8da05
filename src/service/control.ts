/**
 * `hermit status DIR` and `hermit stop DIR`: read the endpoint file, ask the service. A stop lets
 * the service drain (it reports its bound in /health) before it is killed; a service still starting
 * (it holds `.serve/service.lock`, its endpoint not written yet) is waited for, then stopped.
 */
import process from "node:process";
import { Exit, HermitError } from "../errors.ts";
import { isAlive } from "../platform/proc.ts";
import {
  checkEndpoint,
  type Endpoint,
  readEndpoint,
  removeEndpoint,
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
  const ep = readEndpoint(dir);
  if (!ep) {
    return await serviceLockHeld(dir)
      ? { running: false, starting: true, why: STARTING }
      : { running: false, why: "no endpoint file (.serve/endpoint)" };
  }
  const live = await checkEndpoint(ep);
  if (!live.live) return { running: false, why: `stale endpoint: ${live.why}`, url: ep.url, pid: ep.pid };
  const { health } = live;
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
 * Ask the service to stop (with its token), wait for it to exit — its drain bound plus a margin
 * for stopping its upstreams — and kill it past that; a stale endpoint is removed.
 */
export async function stopService(dir: string): Promise<StopResult> {
  const ep = readEndpoint(dir) ?? await startingService(dir);
  if (!ep) return { stopped: false, why: "no service is running (no .serve/endpoint)" };
  const live = await checkEndpoint(ep);
  if (!live.live) {
    removeEndpoint(dir, ep.pid);
    return { stopped: false, why: `no service is running (removed a stale endpoint: ${live.why})` };
  }
  await requestStop(ep);
  const deadline = Date.now() + (live.health.drain_seconds ?? 0) * 1000 + STOP_MARGIN_MS;
  while (isAlive(ep.pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (isAlive(ep.pid)) {
    try {
      process.kill(ep.pid, "SIGKILL");
    } catch { /* gone */ }
    removeEndpoint(dir, ep.pid);
  }
  return { stopped: true, pid: ep.pid };
}

async function requestStop(ep: Endpoint): Promise<void> {
  try {
    const res = await fetch(new URL("/hermit/stop", ep.url), {
      method: "POST",
      headers: { authorization: `Bearer ${ep.token}` },
      signal: AbortSignal.timeout(3000),
    });
    if (res.status === 202) return;
  } catch { /* fall back to a signal */ }
  try {
    process.kill(ep.pid, "SIGTERM");
  } catch { /* gone */ }
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
