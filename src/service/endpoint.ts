/**
 * `DIR/.serve/endpoint`: how relays and `hermit status`/`stop` find a running standalone service.
 * JSON `{url, token, pid, process_start, started_at, version, host_launched}`, mode 0600 in a 0700
 * directory, written atomically, removed on a clean stop. It is valid only while its pid is alive
 * with the same start time and its URL answers `/health` as that pid; otherwise it is stale. What
 * `/health` answers (`Health`) is defined here too.
 */
import { chmodSync, mkdirSync, readFileSync, unlinkSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { writeFileAtomic } from "../platform/atomic_write.ts";
import { isAlive, processStartTime } from "../platform/proc.ts";

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

function serveDir(adapterDir: string): string {
  return path.join(adapterDir, ".serve");
}

function endpointPath(adapterDir: string): string {
  return path.join(serveDir(adapterDir), "endpoint");
}

export function lockPath(adapterDir: string): string {
  return path.join(adapterDir, ".serve.lock");
}

export function logPath(adapterDir: string): string {
  return path.join(serveDir(adapterDir), "log");
}

export function ensureServeDir(adapterDir: string): string {
  const dir = serveDir(adapterDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    chmodSync(dir, 0o700);
  } catch { /* not ours to change */ }
  return dir;
}

export function writeEndpoint(adapterDir: string, ep: Endpoint): void {
  ensureServeDir(adapterDir);
  writeFileAtomic(endpointPath(adapterDir), JSON.stringify(ep, null, 2) + "\n");
}

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

/** Remove the endpoint file if it is still ours. */
export function removeEndpoint(adapterDir: string, pid = process.pid): void {
  const ep = readEndpoint(adapterDir);
  if (ep && ep.pid !== pid) return;
  try {
    unlinkSync(endpointPath(adapterDir));
  } catch { /* gone already */ }
}

export type Liveness = { live: true; health: Health } | { live: false; why: string };

/** Is the service behind `ep` the one that wrote it, and does it answer? */
export async function checkEndpoint(ep: Endpoint, timeoutMs = 2000): Promise<Liveness> {
  const local = /^https?:\/\/(127\.\d+\.\d+\.\d+|localhost|\[::1\])[:/]/.test(ep.url);
  if (local) {
    if (!isAlive(ep.pid)) return { live: false, why: `its process ${ep.pid} is gone` };
    const start = processStartTime(ep.pid);
    if (ep.process_start && start && start !== ep.process_start) {
      return { live: false, why: `pid ${ep.pid} now belongs to another process` };
    }
  }
  try {
    const res = await fetch(new URL("/health", ep.url), {
      headers: { authorization: `Bearer ${ep.token}` }, // the details (its pid) are the operator's
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!res.ok) return { live: false, why: `/health answered ${res.status}` };
    const health = await res.json() as Health;
    if (local && health.pid !== ep.pid) return { live: false, why: "another service answers at its address" };
    return { live: true, health };
  } catch (err) {
    return {
      live: false,
      why: `${new URL(ep.url).host} does not answer (${
        (err as Error).name === "TimeoutError" ? "timeout" : (err as Error).message
      })`,
    };
  }
}
