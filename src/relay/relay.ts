/**
 * The relay: what `hermit serve DIR` becomes for a standalone adapter (or with `--serve-url`). It
 * passes raw JSON-RPC both ways between the host (stdio lines) and the shared service (a
 * `ServiceLink`), so the host's own `initialize` and capabilities reach the service. Until a
 * session exists, what the host sends waits (what the relay answers itself, a `ping` then or a
 * request before any `initialize`, is `own_answers.ts`). It must not die while its host lives: its
 * `ServiceConnection` (`connection.ts`) finds or relaunches a service that went away; the relay
 * then has the host's `initialize` replayed (or sends it again, if it was never answered), retries
 * what is safe to repeat (reads, and calls of read-only tools) and answers a write it cannot
 * confirm with "outcome uncertain"; a request that waits 30 s for a service that is not there gets
 * an error. An answer reaches the host only from the session its request went out on, and once;
 * anything else only from the current session. The service's requests reach the host under ids of
 * the relay's, and the host's answers only the session that asked (`asked.ts`). A 4xx is the
 * service's answer, passed on; a refusal for good (a wrong token) ends the relay.
 */
import type { JSONRPCRequest, RequestId } from "@modelcontextprotocol/sdk/types.js";
import { Exit, HermitError } from "../errors.ts";
import { log } from "../log.ts";
import type { Clock } from "../platform/clock.ts";
import { cancelledId, errorLine, type Message, RpcCode } from "./jsonrpc.ts";
import { AskedOfHost } from "./asked.ts";
import { type Connect, connectHttp, type Link } from "./attach.ts";
import { type ConnectionOwner, type RelayTarget, ServiceConnection } from "./connection.ts";
import type { ServiceAddress } from "./link.ts";
import type { PostResult } from "./link_outcomes.ts";
import { type HostOut, Ledger, type Pending, type Request } from "./ledger.ts";
import { ownAnswer, warmAnswer } from "./own_answers.ts";
import { type Outage, WAIT_MS } from "./policy.ts";
import type { WarmAnswers } from "./warm.ts";

export { type Connect, type Link, ServiceRefused } from "./attach.ts";
export type { RelayTarget } from "./connection.ts";
export type { HostOut } from "./ledger.ts";

export class Relay {
  readonly #warm: WarmAnswers | undefined;
  readonly #out: HostOut;
  readonly #conn: ServiceConnection;
  readonly #clock: Clock;
  /** The link's session takes the host's messages (its initialize was answered, or replayed). */
  #open = false;
  #initializedSent = false;
  readonly #ledger: Ledger;
  /** The service's requests to the host, under ids of the relay's (`asked.ts`). */
  readonly #asked = new AskedOfHost<Link>();
  #init: Request | undefined;
  #initialized = false;
  #refusal: string | undefined;
  readonly refused: Promise<string>;
  #onRefused!: (message: string) => void;

  constructor(
    opts: { target: RelayTarget; out: HostOut; clock: Clock; warm?: WarmAnswers; connect?: Connect },
  ) {
    this.#out = opts.out;
    this.#warm = opts.warm;
    this.#clock = opts.clock;
    this.#ledger = new Ledger(opts.out, opts.clock);
    this.refused = new Promise((resolve) => (this.#onRefused = resolve));
    const owner: ConnectionOwner = {
      replay: () => this.#replay(),
      fromService: (m, link) => this.#fromService(m, link),
      attached: (replayed) => this.#attached(replayed),
      detached: () => (this.#open = false),
      up: () => this.#up(),
      expire: (outage, unavailable) => this.#expireWaiting(outage, unavailable),
      refused: (message) => this.#refusedFor(message),
    };
    this.#conn = new ServiceConnection({
      target: opts.target,
      clock: opts.clock,
      connect: opts.connect ?? connectHttp,
      owner,
    });
  }

  /** Attach to `first`, or (none yet) answer from the warm answers while the target finds one. */
  start(first: ServiceAddress | undefined): Promise<void> {
    return this.#conn.start(first);
  }

  /** Requests not answered yet. */
  get waiting(): number {
    return this.#ledger.size;
  }

  /** Resolves when no request waits for an answer, or after `ms`. */
  idle(ms: number): Promise<void> {
    return this.#ledger.idle(ms);
  }

  /** The host is gone: stop, and end the service session. */
  close(): Promise<void> {
    return this.#conn.close();
  }

  /** One message from the host. */
  fromHost(m: Message): void {
    if (m.kind === "invalid") return this.#out(errorLine(m.id, m.code, m.message));
    const own = ownAnswer(m, { refusal: this.#refusal, init: this.#init, open: this.#open });
    if (own) return own.line === undefined ? undefined : this.#out(own.line);
    if (m.kind === "request") {
      if (m.method === "initialize") this.#init ??= m; // a second one goes on: the service answers it
      const warm = this.#conn.warming ? warmAnswer(m, this.#warm, m === this.#init) : undefined;
      if (warm) return (this.#ledger.learnTools(warm.tools, false), this.#out(warm.line));
      this.#ledger.wait(m);
    } else if (m.kind === "notification") {
      if (!this.#init) return log.debug(`relay: '${m.method}' before initialize, dropped`);
      if (m.method === "notifications/initialized") {
        this.#initialized = true;
        return this.#open ? this.#sendInitialized() : undefined; // sent once the session is open
      }
      // a request not sent yet (queued, held while the service was busy) is simply never sent
      if (m.method === "notifications/cancelled" && this.#ledger.cancelUnsent(cancelledId(m.text))) return;
    } else {
      // an answer to a service's request goes to the session that asked, under its own id
      const routed = this.#asked.answer(m);
      if (!routed || !this.#open || routed.session !== this.#conn.link) {
        return log.debug(
          `relay: the host's answer to ${m.id}, asked by no session that is still there, dropped`,
        );
      }
      m = { ...m, text: routed.text };
    }
    this.#ledger.queue.push(m);
    this.#pump();
  }

  /** Send what can go now: everything once the session is open; before that only the initialize. */
  #pump(): void {
    if (!this.#conn.ready || !this.#conn.link) return;
    const queue = this.#ledger.queue;
    if (this.#open) {
      for (const m of queue.splice(0)) void this.#send(m);
      return;
    }
    const at = queue.findIndex((m) => m === this.#init);
    if (at >= 0) void this.#send(queue.splice(at, 1)[0]);
  }

  async #send(m: Message): Promise<void> {
    const link = this.#conn.link;
    if (!link || m.kind === "invalid") return void this.#ledger.queue.push(m);
    if (m.kind === "request") this.#ledger.markSent(m.id, link);
    const r = await this.#conn.track(link.post(m.text, m.kind === "request" ? m.id : undefined));
    this.#posted(m, r, link);
  }

  /** What a POST came to. */
  #posted(m: Message, r: PostResult, link: Link): void {
    if (r.kind === "accepted" || r.kind === "answered") {
      if (m.kind === "notification" && m.method === "notifications/initialized") link.openEventStream();
      return;
    }
    if (r.kind === "rejected") {
      // a 4xx is the service's answer to this message, not its death
      const what = `the hermit service refused this request (HTTP ${r.status}${
        r.status === 413 ? ", larger than it accepts" : ""
      }): ${r.message}`;
      if (m.kind !== "request") return log.warn(`relay: ${what}`);
      // unless the host has its answer already, or the request went out again on another session
      if (this.#ledger.isOutOn(m.id, link)) this.#settle(m.id, what, r.code ?? RpcCode.InvalidRequest);
      return;
    }
    if (r.kind === "busy") return this.#busy(m, r, link);
    const undelivered = r.kind !== "failed" || !r.delivered;
    if (m.kind === "request" && undelivered && this.#ledger.unsend(m.id, link)) {
      this.#ledger.queue.push(m); // it never ran: it goes again, whatever it is
    } else if (m.kind === "notification" && undelivered && m.method !== "notifications/initialized") {
      this.#ledger.queue.push(m); // (the relay sends initialized itself to each session it opens)
    }
    this.#conn.postFailed(r, link);
  }

  /**
   * The service was at its limit of open requests: `m` never ran and the session is fine. It goes
   * again after the service's Retry-After (on whatever session is current then); a request busy
   * past the wait limit gets an error instead.
   */
  #busy(m: Message, r: Extract<PostResult, { kind: "busy" }>, link: Link): void {
    const next = this.#ledger.busy(m, link, r.retryMs);
    if (next === "gone") return;
    if (next === "give-up") {
      if (m.kind === "request") return this.#settle(m.id, `the hermit service is busy (${r.why}); try again`);
      return log.warn(`relay: the service stayed busy for ${WAIT_MS / 1000} s; a ${m.kind} was dropped`);
    }
    log.debug(`relay: the service is busy (${r.why}); sending again in ${r.retryMs} ms`);
    this.#clock.setTimeout(() => {
      if (m.kind !== "request" || this.#ledger.isWaiting(m.id)) void this.#send(m);
    }, r.retryMs);
  }

  /**
   * A message from `link`'s session. An answer reaches the host only from the session its request
   * went out on, once (a late one from a session given up, for a request answered "outcome
   * uncertain" or sent again, is dropped); anything else only from the current session.
   */
  #fromService(m: Message, link: Link): void {
    if (m.kind === "response") {
      const waiting = this.#ledger.answered(m.id, link);
      if (!waiting) return log.debug(`relay: an answer to ${m.id}, which nothing waits for there, dropped`);
      this.#conn.served(); // the service works for the host again
      const { method } = waiting.msg;
      if (method === "initialize" && waiting.msg === this.#init) this.#initAnswered(m, link);
      if (method === "tools/list") this.#ledger.learnTools(m.result?.tools, true);
      return this.#out(m.text);
    }
    if (link !== this.#conn.link || m.kind === "invalid") return;
    if (m.kind === "request") return this.#out(this.#asked.ask(m, link));
    const text = this.#asked.notification(m, link);
    if (text !== undefined) this.#out(text);
  }

  /** The service answered the host's own initialize: the session is open (or, on an error, not). */
  #initAnswered(m: Extract<Message, { kind: "response" }>, link: Link): void {
    if (link !== this.#conn.link) return;
    const version = m.result?.protocolVersion;
    if (typeof version !== "string") {
      // refused: what waited behind it cannot go; the host may try another initialize
      this.#init = undefined;
      for (const q of this.#ledger.queue.splice(0)) {
        if (q.kind === "request") {
          this.#settle(q.id, "hermit: the service refused initialize", RpcCode.InvalidRequest);
        }
      }
      return;
    }
    link.setProtocolVersion(version);
    this.#open = true;
    queueMicrotask(() => {
      if (this.#initialized) this.#sendInitialized();
      this.#pump();
    });
  }

  #sendInitialized(): void {
    if (this.#initializedSent || !this.#conn.link) return;
    this.#initializedSent = true;
    void this.#send({ kind: "notification", method: "notifications/initialized", text: INITIALIZED });
  }

  /** The host's initialize, for a new session to replay: when the host already has its answer. */
  #replay(): JSONRPCRequest | undefined {
    return this.#init !== undefined && !this.#ledger.isWaiting(this.#init.id) ? this.#init.req : undefined;
  }

  /** A new session: open at once when it replayed the host's initialize, else once that is answered. */
  #attached(replayed: boolean): void {
    this.#open = replayed;
    this.#initializedSent = false;
    // what the sessions before asked of the host is answered to no one
    this.#asked.forgetAllBut(this.#conn.link);
    const queue = this.#ledger.queue;
    for (let i = queue.length - 1; i >= 0; i--) if (queue[i].kind === "response") queue.splice(i, 1);
    if (replayed && this.#initialized) this.#sendInitialized();
  }

  /** Connected (after an outage: what was in flight goes again or is settled), then what waited goes. */
  #up(): void {
    for (const w of this.#ledger.resettle()) this.#forgotten(w);
    this.#pump();
  }

  /** Answer with an error each request that has waited too long in this outage; how many did. */
  #expireWaiting(outage: Outage, unavailable: string): number {
    const expired = this.#ledger.expired(outage, unavailable);
    for (const { id, message } of expired) this.#settle(id, message);
    return expired.length;
  }

  /** Answer a waiting request with an error and forget it (queued or sent). */
  #settle(id: RequestId, message: string, code: number = RpcCode.InternalError): void {
    this.#forgotten(this.#ledger.settle(id, message, code));
  }

  /** A request answered with an error: an initialize never answered lets the host send another. */
  #forgotten(w: Pending | undefined): void {
    if (w && w.msg === this.#init) this.#init = undefined;
  }

  /** The service refuses this relay (a wrong token): answer everything waiting, then end. */
  #refusedFor(message: string): void {
    if (this.#refusal) return;
    this.#refusal = message;
    this.#ledger.refuseAll(`hermit: ${message}`);
    this.#onRefused(message);
  }

  /** The error a relay refused for good ends with (exit 2). */
  refusalError(): HermitError | undefined {
    return this.#refusal ? new HermitError(this.#refusal, Exit.usage) : undefined;
  }
}

const INITIALIZED = JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" });
