/**
 * What the service says about itself, from its state: readiness (`/health`: 200 while it serves,
 * 503 while its upstreams start or while it drains, so balancers and Kubernetes take it out) and
 * liveness (`/health/live`: 200 while the process answers). A caller without the token gets the
 * status only; the operator (with the token) also gets pids, clients, sessions and upstream
 * states, each upstream's last error redacted like every error hermit passes on.
 */
import { sanitizeErrorMessage } from "../gates/sanitize.ts";
import type { Health, UpstreamStatus } from "./endpoint.ts";
import type { HealthAnswer } from "./http_handler.ts";

export type Phase = "starting" | "ready" | "draining";

export interface HealthFacts {
  phase: Phase;
  /** Every upstream connected (or recycled between uses). */
  upstreamsUp: boolean;
  details(): Omit<Health, "status">;
}

export function readiness(f: HealthFacts): Health["status"] {
  if (f.phase !== "ready") return f.phase;
  return f.upstreamsUp ? "ok" : "degraded";
}

export function healthAnswer(f: HealthFacts, operator: boolean): HealthAnswer {
  const status = readiness(f);
  const code = status === "ok" || status === "degraded" ? 200 : 503;
  return { status: code, body: operator ? { status, ...f.details() } : { status } };
}

export function liveAnswer(f: HealthFacts, operator: boolean): HealthAnswer {
  return { status: 200, body: operator ? { status: readiness(f), live: true } : { live: true } };
}

/** An upstream as the operator sees it: its last error without credentials. */
export function upstreamView(u: UpstreamStatus): UpstreamStatus {
  return u.lastError ? { ...u, lastError: sanitizeErrorMessage(u.lastError) } : u;
}
