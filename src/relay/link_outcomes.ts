/**
 * What a relay's HTTP exchanges with its service came to, as tagged results: a POST's
 * `PostResult` and a GET's `StreamOpen`, judged from the status and the transport's own error
 * codes, never from message text (a body only lends its reason or JSON-RPC error code to the
 * message). Pure; the I/O is the link's (`link.ts`).
 */
import type { HttpAnswer } from "../platform/http_answer.ts";
import { reasonIn, type Refusal } from "../service/access.ts";
import { SERVICE_BUSY } from "../service/http_errors.ts";

export type PostResult =
  /** 202, or a 200 with nothing to read: the message arrived. */
  | { kind: "accepted" }
  /** The answer came (and went to `onMessage` with everything else the stream carried). */
  | { kind: "answered" }
  /** 401 or 403: this relay may not talk to the service. */
  | { kind: "refused"; refusal: Refusal }
  /** 404 for our session id: the service forgot the session; the message was not processed. */
  | { kind: "session-gone" }
  /**
   * 503 from the service's own limit on open requests: not taken, the session is fine; send it
   * again after `retryMs` (its Retry-After).
   */
  | { kind: "busy"; retryMs: number; why: string }
  /** Another 4xx: the service's answer to this message (e.g. 413, a body over its limit). */
  | { kind: "rejected"; status: number; code?: number; message: string }
  /** 5xx, a broken connection, or a stream that ended unanswered. `delivered`: it may have run. */
  | { kind: "failed"; delivered: boolean; why: string };

/** What a GET for the service's stream came to: a stream, none offered (405), no session (404), … */
export type StreamOpen =
  | { kind: "stream"; res: HttpAnswer }
  | { kind: "none" }
  | { kind: "gone" }
  | { kind: "refused"; r: Refusal }
  | { kind: "error"; why: string };

/** Error codes (not texts) of a connection that was never made: what was sent did not arrive. */
const UNREACHED = new Set(["ECONNREFUSED", "ConnectionRefused", "ENOTFOUND", "EHOSTUNREACH", "ENETUNREACH"]);

/** Did a fetch fail before any byte reached the service? Judged from error codes only. */
export function neverReached(err: unknown): boolean {
  for (let e = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && UNREACHED.has(code)) return true;
    const name = (e as { name?: unknown }).name;
    if (name === "ConnectionRefused") return true; // Deno's error class for it
  }
  return false;
}

/** How long a busy service asks to wait (its Retry-After, in seconds), within 0.1–5 s. */
function retryAfterMs(header: string | null | undefined): number {
  const s = Number(header);
  return Number.isFinite(s) && header ? Math.min(Math.max(s * 1000, 100), 5000) : 1000;
}

/**
 * A POST the service did not take (not 2xx), from its status, Retry-After and body; `session`: we
 * sent one.
 */
export function postNotTaken(
  res: { status: number; statusText: string; retryAfter?: string | null },
  body: string,
  session: boolean,
): PostResult {
  const detail = reasonIn(body) || res.statusText || String(res.status);
  if (res.status === 503 && codeIn(body) === SERVICE_BUSY) {
    return { kind: "busy", retryMs: retryAfterMs(res.retryAfter), why: `HTTP 503: ${detail}` };
  }
  if (res.status === 401 || res.status === 403) {
    return { kind: "refused", refusal: { status: res.status, detail } };
  }
  if (res.status === 404 && session) return { kind: "session-gone" };
  // draining (it answers before running anything), or a balancer with no replica up
  if (res.status === 503) return { kind: "failed", delivered: false, why: `HTTP 503: ${detail}` };
  if (res.status >= 400 && res.status < 500) {
    return { kind: "rejected", status: res.status, code: codeIn(body), message: detail };
  }
  return { kind: "failed", delivered: true, why: `HTTP ${res.status}: ${detail}` };
}

/** A GET for the service's stream answered without one, from its status and body. */
export function noStream(res: { status: number; statusText: string }, body: string): StreamOpen {
  if (res.status === 405) return { kind: "none" };
  if (res.status === 404) return { kind: "gone" };
  if (res.status === 401 || res.status === 403) {
    return { kind: "refused", r: { status: res.status, detail: reasonIn(body) || String(res.status) } };
  }
  return { kind: "error", why: `HTTP ${res.status}: ${reasonIn(body) || res.statusText}` };
}

/** A transport error in one line, with its error code when it has one. */
export function describe(err: unknown): string {
  const e = err as { name?: string; message?: string; code?: string };
  return e?.code ? `${e.message ?? e.name} (${e.code})` : String(e?.message ?? err);
}

/** The JSON-RPC error code in a body, when it holds one. */
function codeIn(body: string): number | undefined {
  try {
    const code = JSON.parse(body)?.error?.code;
    return typeof code === "number" ? code : undefined;
  } catch {
    return undefined;
  }
}
