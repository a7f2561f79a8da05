/**
 * `DIR/.serve/endpoint`: how relays and `hermit status`/`stop` find a running standalone service.
 * JSON `{url, token, pid, process_start, started_at, version, host_launched}`, mode 0600 in the
 * owner-only `.serve/` (`serve_dir.ts`), written atomically, removed on a clean stop. A file that
 * is a symbolic link, belongs to someone else or is writable by group or others is refused (one
 * line, exit 4). It is valid only while its pid is alive with the same start time, its URL names
 * this machine, and that URL answers `/health` as that pid (or, from that very process, says it is
 * busy or does not answer in time: live but busy); otherwise it is stale. What `/health`
 * answers (`Health`) is defined here too.
 */
import { readFileSync, unlinkSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { log } from "../log.ts";
import { writeFileAtomic } from "../platform/atomic_write.ts";
import { isLoopbackName } from "../gates/loopback.ts";
import { type FetchLike, plainFetch } from "../platform/plain_fetch.ts";
import { isAlive, processStartTime } from "../platform/proc.ts";
import { SERVICE_BUSY } from "./http_errors.ts";
import { checkTrusted, ensureServeDir, serveDir } from "./serve_dir.ts";

export { ensureServeDir, lockPath, logPath } from "./serve_dir.ts";

export interface Endpoint {
  url: string;
  token: string;
  pid: number;
  /** The OS's start time of `pid` (guards against pid reuse); absent where unknown. */
  process_start?: string;
  started_at: string;
  version: string;
  host_launched: boolean;
}

/** An upstream as `/health` reports it. */
export interface UpstreamStatus {
  name: string;
  state: string;
  transport: string;
  tools: number;
  pid?: number;
  lastError?: string;
}

/** What `GET /health` answers with the token (without it: only `status`). */
export interface Health {
  /**
   * starting: bound, upstreams still starting (MCP requests wait); degraded: some upstream is down;
   * draining: stopping, finishing the calls in flight (503, like starting).
   */
  status: "starting" | "ok" | "degraded" | "draining";
  adapter: string;
  version: string;
  pid: number;
  uptime_s: number;
  clients: number;
  host_launched: boolean;
  tools: number;
  upstreams: UpstreamStatus[];
  /** How long a stop waits for calls in flight (`serve.drain_seconds`). */
  drain_seconds?: number;
  /** Per session: its requests so far and what is open (for sticky-session checks). */
  sessions?: { session: string; client?: string; requests: number; in_flight: number; streams: number }[];
}

function endpointPath(adapterDir: string): string {
  return path.join(serveDir(adapterDir), "endpoint");
}

export function writeEndpoint(adapterDir: string, ep: Endpoint): void {
  ensureServeDir(adapterDir);
  writeFileAtomic(endpointPath(adapterDir), JSON.stringify(ep, null, 2) + "\n");
}

/** The endpoint file's content, if there is a well-formed one; never throws (see `trustedEndpoint`). */
export function readEndpoint(adapterDir: string): Endpoint | undefined {
  try {
    const ep = JSON.parse(readFileSync(endpointPath(adapterDir), "utf8")) as Endpoint;
    if (typeof ep.url !== "string" || typeof ep.token !== "string" || typeof ep.pid !== "number") {
      return undefined;
    }
    return ep;
  } catch {
    return undefined;
  }
}

/**
 * The endpoint file, read only when `.serve/` and the file are trustworthy: a `HermitError` (exit
 * 4) naming what is wrong otherwise, before anything is sent anywhere.
 */
export function trustedEndpoint(adapterDir: string): Endpoint | undefined {
  checkTrusted(serveDir(adapterDir), "directory");
  checkTrusted(endpointPath(adapterDir), "file");
  return readEndpoint(adapterDir);
}

/** Remove the endpoint file if it is still ours. */
export function removeEndpoint(adapterDir: string, pid = process.pid): void {
  const ep = readEndpoint(adapterDir);
  if (ep && ep.pid !== pid) return;
  try {
    unlinkSync(endpointPath(adapterDir));
  } catch { /* gone already */ }
}

/**
 * What `checkEndpoint` found. Live: the service answers `/health` as the process that wrote the
 * endpoint, or that process (same pid and start time) runs but is busy (its `/health` said
 * `SERVICE_BUSY` or did not answer in time): it is there, so nothing may replace it or remove its
 * endpoint. Not live: stale; `gone` when its process is gone or its pid is another process's now
 * (only then may the file be removed by someone else).
 */
export type Liveness =
  | { live: true; health: Health; busy?: undefined }
  | { live: true; health?: undefined; busy: string }
  | { live: false; why: string; gone: boolean };

/**
 * What talks to a service at `url`: `plainFetch` for http:// on a loopback name (no proxy can
 * apply there, and the runtime's `fetch` costs a relay 60–70 µs of CPU per request on its own
 * thread), the runtime's `fetch` anywhere else (https, proxies).
 */
export function fetchFor(url: string): FetchLike {
  try {
    const u = new URL(url);
    if (u.protocol === "http:" && isLoopbackName(u.hostname)) return plainFetch;
  } catch { /* not a URL: fetch says why */ }
  return fetch;
}

/** Does `url` name this machine: a loopback name, or an address of one of its interfaces? */
export async function onThisMachine(url: string): Promise<boolean> {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return false;
  }
  if (isLoopbackName(host)) return true;
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  const { networkInterfaces } = await import("node:os");
  return Object.values(networkInterfaces()).some((list) => list?.some((a) => a.address === bare));
}

/**
 * Is the service behind `ep` the one that wrote it, and does it answer? A URL that does not name
 * this machine is never contacted: the file could send relays (and their token) anywhere. A busy
 * answer (503 `SERVICE_BUSY`) or none within `timeoutMs` counts as live only from the very process
 * that wrote the endpoint (its start time read and matching): a service under load is not stale.
 */
export async function checkEndpoint(ep: Endpoint, timeoutMs = 2000): Promise<Liveness> {
  if (!(await onThisMachine(ep.url))) {
    return { live: false, why: `its URL ${ep.url} is not on this machine`, gone: false };
  }
  if (!isAlive(ep.pid)) return { live: false, why: `its process ${ep.pid} is gone`, gone: true };
  const start = processStartTime(ep.pid);
  if (ep.process_start && start && start !== ep.process_start) {
    return { live: false, why: `pid ${ep.pid} now belongs to another process`, gone: true };
  }
  const verified = !!ep.process_start && start === ep.process_start;
  const busy = (why: string): Liveness =>
    verified ? { live: true, busy: why } : { live: false, why, gone: false };
  try {
    const healthUrl = new URL("/health", ep.url).href;
    const res = await fetchFor(healthUrl)(healthUrl, {
      method: "GET",
      headers: { authorization: `Bearer ${ep.token}` }, // the details (its pid) are the operator's
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!res.ok) {
      const code = res.status === 503 ? await res.json().then(errorCode, () => undefined) : undefined;
      await res.body?.cancel().catch(() => {});
      if (code === SERVICE_BUSY) return busy(`busy: /health answered 503 (serve.max_connections reached)`);
      return { live: false, why: `/health answered ${res.status}`, gone: false };
    }
    const health = await res.json() as Health;
    if (health.pid !== ep.pid) {
      return { live: false, why: "another service answers at its address", gone: false };
    }
    return { live: true, health };
  } catch (err) {
    const timeout = (err as Error).name === "TimeoutError";
    const why = `${new URL(ep.url).host} does not answer (${timeout ? "timeout" : (err as Error).message})`;
    return timeout ? busy(`busy: ${why}`) : { live: false, why, gone: false };
  }
}

/** The JSON-RPC error code of an error body, if it is one. */
function errorCode(body: unknown): unknown {
  return (body as { error?: { code?: unknown } } | null)?.error?.code;
}

/** The live endpoint of the adapter's service, if one runs; throws when `.serve/` is not to be trusted. */
export async function findService(dir: string): Promise<Endpoint | undefined> {
  const ep = trustedEndpoint(dir);
  if (!ep) return undefined;
  const live = await checkEndpoint(ep);
  if (!live.live) log.debug(`stale endpoint in ${dir}/.serve: ${live.why}`);
  else if (live.busy) log.debug(`the service in ${dir}/.serve runs, ${live.busy}`);
  return live.live ? ep : undefined;
}
