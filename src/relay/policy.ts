/**
 * The relay's decisions about requests caught when its service goes away, pure over what it
 * knows: which are safe to send again (reads, and calls of read-only tools), which have waited too
 * long, what the host is told about the rest, and how attempts are paced.
 */
import type { JSONRPCRequest, RequestId } from "@modelcontextprotocol/sdk/types.js";

/** Methods that are safe to send twice. `tools/call` is, only for read-only tools. */
const IDEMPOTENT = new Set([
  "ping",
  "tools/list",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "resources/subscribe",
  "resources/unsubscribe",
  "prompts/list",
  "prompts/get",
  "completion/complete",
  "logging/setLevel",
]);

/** How long a request waits for a service that is not there before it gets an error. */
export const WAIT_MS = 30_000;

/** A request from the host, not answered yet, and since when it has been waiting. */
export interface Waiting {
  req: JSONRPCRequest;
  at: number;
}

/** The requests that went out to a session (and are not answered yet). */
export type Sent = Pick<ReadonlySet<RequestId>, "has">;

/** A time without a working service: from its loss until the service answers the host again. */
export interface Outage {
  since: number;
  /** Connections made during it: paces a service that accepts connections but fails requests. */
  connects: number;
  warned: boolean;
}

/** The pause before try number `tries` (1, 2, …) of one outage: 250 ms doubling, at most 5 s. */
export const backoffMs = (tries: number): number => Math.min(250 * 2 ** (tries - 1), 5000);

export function safeToRepeat(req: JSONRPCRequest, readOnlyTools: ReadonlySet<string>): boolean {
  const tool = (req.params as { name?: string } | undefined)?.name;
  return IDEMPOTENT.has(req.method) ||
    (req.method === "tools/call" && tool !== undefined && readOnlyTools.has(tool));
}

export function uncertainMessage(req: JSONRPCRequest): string {
  const what = (req.params as { name?: string } | undefined)?.name ?? req.method;
  return `outcome uncertain: the hermit service went away while ${what} was running; it may or may not have taken effect. Check before retrying.`;
}

/**
 * The requests that were sent when the service went away, once a new one is attached: those to
 * send again (an unanswered `initialize` first: it opens the new session as it would have the
 * old), and those to answer "outcome uncertain".
 */
export function settleSent<W extends Waiting>(
  pending: Iterable<W>,
  sent: Sent,
  readOnlyTools: ReadonlySet<string>,
): { resend: W[]; uncertain: W[] } {
  const resend: W[] = [];
  const uncertain: W[] = [];
  for (const w of pending) {
    if (!sent.has(w.req.id)) continue; // queued: goes out with the queue
    if (w.req.method === "initialize") resend.unshift(w);
    else if (safeToRepeat(w.req, readOnlyTools)) resend.push(w);
    else uncertain.push(w);
  }
  return { resend, uncertain };
}

/**
 * The requests that have waited `WAIT_MS` in this outage (a request sent before it waits from its
 * start), each with its error: "outcome uncertain" for a write that was sent, else `unavailable`.
 */
export function expiredRequests(
  pending: Iterable<Waiting>,
  sent: Sent,
  readOnlyTools: ReadonlySet<string>,
  outage: Outage,
  now: number,
  unavailable: string,
): { id: RequestId; message: string }[] {
  return [...pending].filter((w) => now - Math.max(w.at, outage.since) >= WAIT_MS).map(({ req }) => ({
    id: req.id,
    message: sent.has(req.id) && req.method !== "initialize" && !safeToRepeat(req, readOnlyTools)
      ? uncertainMessage(req)
      : `hermit: ${unavailable}`,
  }));
}
