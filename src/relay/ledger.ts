/**
 * What a relay's host is waiting for: each request from the host not answered yet (queued for a
 * session, or sent to one: only those can be "in flight", and only the session it went out on may
 * answer it), the messages queued for the next session, and which tools are read-only (what the
 * catalog served says). Settling a request answers the host with an error and forgets it; the host
 * gets at most one answer per request. The decisions about what was in flight when a service went
 * away are the policy's (`policy.ts`). Also the drain: who waits for the last answer.
 */
import type { RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { Clock } from "../platform/clock.ts";
import { errorLine, type Message, RpcCode } from "./jsonrpc.ts";
import {
  expiredRequests,
  type Outage,
  settleSent,
  uncertainMessage,
  WAIT_MS,
  type Waiting,
} from "./policy.ts";

export type Request = Extract<Message, { kind: "request" }>;
export interface Pending extends Waiting {
  msg: Request;
}
/** Where the relay writes lines for the host. */
export type HostOut = (line: string) => void;
/** The session a request went out on (the relay's link): its answer counts only from there. */
export type Via = object;

export class Ledger {
  /** Messages waiting for a session, in order. */
  readonly queue: Message[] = [];
  readonly readOnly = new Set<string>();
  readonly #pending = new Map<RequestId, Pending>();
  /** The requests in flight, each with the session it went out on. */
  readonly #sent = new Map<RequestId, Via>();
  readonly #idle = new Set<() => void>();
  /** Requests in flight the host has cancelled (the service was told). */
  readonly #cancelled = new Set<RequestId>();
  /** When the service first answered "busy" to a notification (requests keep their own time). */
  readonly #busySince = new WeakMap<Message, number>();
  readonly #out: HostOut;
  readonly #clock: Clock;

  constructor(out: HostOut, clock: Clock) {
    this.#out = out;
    this.#clock = clock;
  }

  get size(): number {
    return this.#pending.size;
  }

  wait(m: Request): void {
    this.#pending.set(m.id, { req: m.req, msg: m, at: this.#clock.now() });
  }

  /**
   * The host cancelled request `id`: if it has not gone out (queued, or held while the service was
   * busy), it is forgotten without an answer (MCP answers no cancelled request) and never sent.
   * True when so; false when it is out (the service is told) or unknown.
   */
  cancelUnsent(id: RequestId): boolean {
    if (!this.#pending.has(id)) return false;
    if (this.#sent.has(id)) {
      this.#cancelled.add(id); // out: should it come back unsent (busy, refused), it goes no more
      return false;
    }
    const at = this.queue.findIndex((m) => m.kind === "request" && m.id === id);
    if (at >= 0) this.queue.splice(at, 1);
    this.#forget(id);
    return true;
  }

  /**
   * The service answered "busy" (its limit of open requests) to `m` sent on `via`: it never ran.
   * "again" after the retry; "give-up" once a request has waited `WAIT_MS` since the host sent it,
   * or a notification has been busy that long (it has no one to answer); "gone" when the request
   * waits no more there (answered, settled, sent elsewhere).
   */
  busy(m: Message, via: Via, retryMs: number): "again" | "give-up" | "gone" {
    let since: number;
    if (m.kind === "request") {
      if (!this.unsend(m.id, via)) return "gone";
      since = this.#pending.get(m.id)!.at;
    } else {
      since = this.#busySince.get(m) ?? this.#clock.now();
      this.#busySince.set(m, since);
    }
    return this.#clock.now() - since + retryMs >= WAIT_MS ? "give-up" : "again";
  }

  isWaiting(id: RequestId): boolean {
    return this.#pending.has(id);
  }

  markSent(id: RequestId, via: Via): void {
    this.#sent.set(id, via);
  }

  /**
   * Does request `id` wait for its answer from `via`? Not once it was answered or settled, nor when
   * it went out again on another session.
   */
  isOutOn(id: RequestId, via: Via): boolean {
    return this.#pending.has(id) && this.#sent.get(id) === via;
  }

  /**
   * A request that never reached `via` goes back to waiting; false when it was not in flight there,
   * or when the host cancelled it meanwhile (then it is forgotten, never sent again).
   */
  unsend(id: RequestId, via: Via): boolean {
    if (!this.isOutOn(id, via)) return false;
    if (this.#cancelled.has(id)) {
      this.#forget(id);
      return false;
    }
    return this.#sent.delete(id);
  }

  /**
   * The answer to `id` came from `via`: forget the request. The request it answers, when it waited
   * for an answer from there (else the answer is for no one: a late one, or another session's).
   */
  answered(id: RequestId, via: Via): Pending | undefined {
    if (!this.isOutOn(id, via)) return undefined;
    const w = this.#pending.get(id);
    this.#forget(id);
    return w;
  }

  /** Answer a waiting request with an error and forget it (queued or sent); nothing if it waits no more. */
  settle(id: RequestId, message: string, code: number = RpcCode.InternalError): Pending | undefined {
    const w = this.#pending.get(id);
    if (!w) return undefined; // answered already: one answer per request
    this.#forget(id);
    const at = this.queue.findIndex((m) => m.kind === "request" && m.id === id);
    if (at >= 0) this.queue.splice(at, 1);
    this.#out(errorLine(id, code, message));
    return w;
  }

  /**
   * A new session is up: what was in flight goes again when safe (first, before what was queued)
   * or is answered "outcome uncertain"; the requests so answered are returned.
   */
  resettle(): Pending[] {
    for (const id of [...this.#cancelled]) this.#forget(id); // cancelled: neither sent again nor answered
    const { resend, uncertain } = settleSent(this.#pending.values(), this.#sent, this.readOnly);
    for (const w of resend) this.#sent.delete(w.req.id);
    const settled = uncertain.map((w) => (this.settle(w.req.id, uncertainMessage(w.req)), w));
    this.queue.unshift(...resend.map((w) => w.msg));
    return settled;
  }

  /** The requests that have waited too long in this outage, with their errors (not settled yet). */
  expired(outage: Outage, unavailable: string): { id: RequestId; message: string }[] {
    return expiredRequests(
      this.#pending.values(),
      this.#sent,
      this.readOnly,
      outage,
      this.#clock.now(),
      unavailable,
    );
  }

  /** What a served `tools/list` says about read-only tools (the whole list, so others are not). */
  learnTools(tools: unknown, complete: boolean): void {
    if (!Array.isArray(tools)) return;
    for (const t of tools as { name: string; annotations?: { readOnlyHint?: boolean } }[]) {
      if (t.annotations?.readOnlyHint === true) this.readOnly.add(t.name);
      else if (complete) this.readOnly.delete(t.name);
    }
  }

  /** Answer everything waiting with `message` and forget it all. */
  refuseAll(message: string): void {
    for (const id of this.#pending.keys()) this.#out(errorLine(id, RpcCode.InternalError, message));
    this.#pending.clear();
    this.#sent.clear();
    this.queue.length = 0;
    this.#drained();
  }

  /** Resolves when no request waits for an answer, or after `ms`. */
  idle(ms: number): Promise<void> {
    if (this.#pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.#clock.clearTimeout(timer);
        this.#idle.delete(done);
        resolve();
      };
      const timer = this.#clock.setTimeout(done, ms);
      this.#idle.add(done);
    });
  }

  #forget(id: RequestId): void {
    this.#pending.delete(id);
    this.#sent.delete(id);
    this.#cancelled.delete(id);
    if (this.#pending.size === 0) this.#drained();
  }

  #drained(): void {
    for (const done of [...this.#idle]) done();
  }
}
