/**
 * The relay: what `hermit serve DIR` becomes for a standalone adapter (or with `--serve-url`). It
 * passes raw JSON-RPC both ways between the host (stdio lines) and the shared service (a
 * `ServiceLink`), so the host's own `initialize` and capabilities reach the service. Until a
 * session exists, what the host sends waits (a `ping` is answered here; a request before any
 * `initialize` gets JSON-RPC's Invalid Request). It must not die while its host lives: when the
 * service goes away it finds or relaunches one, replays the host's `initialize` (or sends it again,
 * if it was never answered), retries what is safe to repeat (reads, and calls of read-only tools)
 * and answers a write it cannot confirm with "outcome uncertain"; a request that waits 30 s for a
 * service that is not there gets an error. A 4xx is the service's answer, passed on; a refusal for
 * good (a wrong token) ends the relay. Every session it leaves is DELETEd. Time comes from an
 * injected clock.
 */
import type { RequestId } from "@modelcontextprotocol/sdk/types.js";
import { Exit, HermitError } from "../errors.ts";
import { log } from "../log.ts";
import type { Clock } from "../mcp/upstream_lifecycle.ts";
import type { Refusal } from "../service/access.ts";
import { errorLine, type Message, resultLine, RpcCode } from "./jsonrpc.ts";
import { type Connect, connectHttp, type Link, openLink, ServiceRefused } from "./attach.ts";
import type { ServiceAddress } from "./link.ts";
import type { PostResult } from "./link_outcomes.ts";
import { type HostOut, Ledger, type Pending, type Request } from "./ledger.ts";
import { backoffMs, type Outage, WAIT_MS } from "./policy.ts";
import type { WarmAnswers } from "./warm.ts";

export { type Connect, type Link, ServiceRefused } from "./attach.ts";
export type { HostOut } from "./ledger.ts";

export interface RelayTarget {
  /** Find (or launch) the service; undefined when none runs and none may be started. */
  locate(): Promise<ServiceAddress | undefined>;
  /** Is the service at `addr` still there? Asked when its event stream breaks. */
  /** Said when no service can be found while the host waits. */
  unavailable: string;
  /**
   * What to say when the service answers 401 or 403: the relay then ends with that error. Without
   * it the relay finds the service again (a relaunched local service has a new token).
   */
  refused?(r: Refusal): string;
}

/** A connection that held this long ends the outage before it. */
const STEADY_MS = 30_000;
/** How long a lost connection's requests in transit get to settle before what is left is judged. */
const SETTLE_MS = 3000;

export class Relay {
  readonly #target: RelayTarget;
  readonly #warm: WarmAnswers | undefined;
  readonly #clock: Clock;
  readonly #out: HostOut;
  readonly #connect: Connect;
  #link: Link | undefined;
  #connectedAt = 0;
  /** warming: no service yet (answering what the manifest and cache can); reconnecting: lost it. */
  #phase: "connecting" | "warming" | "ready" | "reconnecting" | "closed" = "connecting";
  /** The link's session takes the host's messages (its initialize was answered, or replayed). */
  #open = false;
  #initializedSent = false;
  readonly #ledger: Ledger;
  /** POSTs not finished yet (an answer still coming, or its failure). */
  readonly #posting = new Set<Promise<PostResult>>();
  #init: Request | undefined;
  #initialized = false;
  #outage: Outage | undefined;
  #refusal: string | undefined;
  readonly refused: Promise<string>;
  #onRefused!: (message: string) => void;

  constructor(
    opts: { target: RelayTarget; out: HostOut; clock: Clock; warm?: WarmAnswers; connect?: Connect },
  ) {
    this.#target = opts.target;
    this.#connect = opts.connect ?? connectHttp;
    this.#out = opts.out;
    this.#clock = opts.clock;
    this.#warm = opts.warm;
    this.#ledger = new Ledger(opts.out, opts.clock);
    this.refused = new Promise((resolve) => (this.#onRefused = resolve));
  }

  /** Attach to `first`, or (none yet) answer from the warm answers while the target finds one. */
  async start(first: ServiceAddress | undefined): Promise<void> {
    if (first) {
      await this.#attach(first);
      this.#phase = "ready";
      this.#pump();
    } else {
      this.#phase = "warming";
      void this.#connectLoop("the service is up");
    }
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
  async close(): Promise<void> {
    this.#phase = "closed";
    const link = this.#link;
    this.#link = undefined;
    await link?.close();
  }

  /** One message from the host. */
  fromHost(m: Message): void {
    if (m.kind === "invalid") return this.#out(errorLine(m.id, m.code, m.message));
    if (this.#refusal) {
      if (m.kind === "request") this.#answerError(m.id, `hermit: ${this.#refusal}`);
      return;
    }
    if (m.kind === "request") {
      if (m.method === "initialize") this.#init ??= m; // a second one goes on: the service answers it
      else if (!this.#init && m.method !== "ping") {
        return this.#out(errorLine(
          m.id,
          RpcCode.InvalidRequest,
          `Invalid Request: '${m.method}' before initialize; a client sends initialize first (MCP lifecycle)`,
        ));
      }
      // ping may come at any time; before a session exists it is answered here
      if (m.method === "ping" && !this.#open) return this.#out(resultLine(m.id, {}));
      if (this.#phase === "warming" && this.#answerWarm(m)) return;
      this.#ledger.wait(m);
    } else if (m.kind === "notification") {
      if (!this.#init) return log.debug(`relay: '${m.method}' before initialize, dropped`);
      if (m.method === "notifications/initialized") {
        this.#initialized = true;
        return this.#open ? this.#sendInitialized() : undefined; // sent once the session is open
      }
    } else if (!this.#open) {
      return; // an answer to a service's request belongs to the session that asked
    }
    this.#ledger.queue.push(m);
    this.#pump();
  }

  /** Before the service is up: answer initialize (and tools/list when the cache knows it all). */
  #answerWarm(m: Request): boolean {
    if (!this.#warm) return false;
    if (m.method === "initialize" && m === this.#init) {
      const requested = (m.req.params as { protocolVersion?: unknown } | undefined)?.protocolVersion;
      this.#out(resultLine(m.id, this.#warm.initialize(requested))); // replayed to the service once it is up
      return true;
    }
    if (m.method === "tools/list") {
      const result = this.#warm.toolsList();
      if (!result) return false;
      this.#ledger.learnTools(result.tools, false);
      this.#out(resultLine(m.id, result));
      return true;
    }
    return false;
  }

  /** Send what can go now: everything once the session is open; before that only the initialize. */
  #pump(): void {
    if (this.#phase !== "ready" || !this.#link) return;
    const queue = this.#ledger.queue;
    if (this.#open) {
      for (const m of queue.splice(0)) void this.#send(m);
      return;
    }
    const at = queue.findIndex((m) => m === this.#init);
    if (at >= 0) void this.#send(queue.splice(at, 1)[0]);
  }

  async #send(m: Message): Promise<void> {
    const link = this.#link;
    if (!link || m.kind === "invalid") return void this.#ledger.queue.push(m);
    if (m.kind === "request") this.#ledger.markSent(m.id, link);
    const posting = link.post(m.text, m.kind === "request" ? m.id : undefined);
    this.#posting.add(posting);
    const r = await posting.finally(() => this.#posting.delete(posting));
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
    const undelivered = r.kind !== "failed" || !r.delivered;
    if (m.kind === "request" && undelivered && this.#ledger.unsend(m.id, link)) {
      this.#ledger.queue.push(m); // it never ran: it goes again, whatever it is
    } else if (m.kind === "notification" && undelivered) this.#ledger.queue.push(m);
    if (this.#link !== link) return; // already replaced
    if (r.kind === "refused") {
      const fatal = this.#target.refused?.(r.refusal);
      if (fatal) return this.#refusedFor(fatal);
      return void this.#lost(`the service refused the relay (${r.refusal.status})`);
    }
    void this.#lost(r.kind === "session-gone" ? "the service forgot this session" : r.why);
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
      this.#outage = undefined; // the service works for the host again
      const { method } = waiting.msg;
      if (method === "initialize" && waiting.msg === this.#init) this.#initAnswered(m, link);
      if (method === "tools/list") this.#ledger.learnTools(m.result?.tools, true);
      return this.#out(m.text);
    }
    if (link === this.#link && m.kind !== "invalid") this.#out(m.text);
  }

  /** The service answered the host's own initialize: the session is open (or, on an error, not). */
  #initAnswered(m: Extract<Message, { kind: "response" }>, link: Link): void {
    if (link !== this.#link) return;
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
    if (this.#initializedSent || !this.#link) return;
    this.#initializedSent = true;
    void this.#send({ kind: "notification", method: "notifications/initialized", text: INITIALIZED });
  }

  /** Connect to `addr`; replay the host's initialize when the host already has its answer. */
  async #attach(addr: ServiceAddress): Promise<void> {
    const replay = this.#init !== undefined && !this.#ledger.isWaiting(this.#init.id);
    let link: Link | undefined = undefined; // set once open: messages during the replay are not yet for the host
    link = await openLink({
      connect: this.#connect,
      addr,
      clock: this.#clock,
      replay: replay ? this.#init!.req : undefined,
      handlers: {
        onMessage: (m) => link && this.#fromService(m, link),
        streamBroke: async (why) => {
          if (this.#link !== link) return false;
          log.debug(`relay: service stream: ${why}`);
          // the session itself is asked (behind a balancer, /health is any replica's)
          if (link && await link.sessionAlive() && this.#link === link) return true;
          if (this.#link === link) void this.#lost(why);
          return false;
        },
        streamRefused: (r) => {
          if (this.#link !== link) return;
          const fatal = r !== "session-gone" && this.#target.refused?.(r);
          if (fatal) return this.#refusedFor(fatal);
          void this.#lost(
            r === "session-gone" ? "the service forgot this session" : "the service refused the relay",
          );
        },
      },
    });
    this.#link = link;
    this.#open = replay;
    this.#initializedSent = false;
    this.#connectedAt = this.#clock.now();
    if (replay && this.#initialized) this.#sendInitialized();
  }

  /** The service is gone: end its session, find or relaunch one, re-initialize, settle what was in flight. */
  async #lost(why: string): Promise<void> {
    if (this.#phase !== "ready") return;
    this.#phase = "reconnecting";
    const old = this.#link;
    this.#link = undefined;
    this.#open = false;
    // what was on its way settles first (an answer, or a refusal that shows it never ran): closing
    // the link would cut a request in transit, one a draining service is still finishing
    if (this.#posting.size) {
      await Promise.race([Promise.allSettled([...this.#posting]), this.#sleep(SETTLE_MS)]);
    }
    void old?.close(); // DELETE: a session left behind would count as a client that is not there
    if (this.#clock.now() - this.#connectedAt >= STEADY_MS) this.#outage = undefined;
    log.warn(`relay: lost the service (${why}); reconnecting`);
    await this.#connectLoop("reconnected to the service");
  }

  /**
   * Find (or launch) a service until one answers, pacing the attempts over the whole outage;
   * attach (replaying the host's initialize when the host has its answer); settle what was in
   * flight; then send what waited.
   */
  async #connectLoop(done: string): Promise<void> {
    const phase = this.#phase;
    const outage = this.#outage ??= { since: this.#clock.now(), connects: 0, warned: false };
    let said: string | undefined; // a reason worth a warning (an endpoint refused as untrusted), once
    for (let attempt = 1; this.#phase === phase; attempt++) {
      const tries = outage.connects + attempt - 1;
      if (tries > 0) {
        this.#expireWaiting(outage);
        await this.#sleep(backoffMs(tries));
        if (this.#phase !== phase) return;
      }
      try {
        const addr = await this.#target.locate();
        if (addr && this.#phase === phase) {
          await this.#attach(addr);
          break;
        }
      } catch (err) {
        const fatal = err instanceof ServiceRefused && this.#target.refused?.(err.refusal);
        if (fatal) return this.#refusedFor(fatal);
        if (err instanceof HermitError && err.message !== said) log.warn(`relay: ${(said = err.message)}`);
        else log.debug(`relay: attempt ${attempt} to reach the service: ${(err as Error)?.message ?? err}`);
      }
    }
    if (this.#phase !== phase) return void this.#link?.close();
    outage.connects++;
    log.info(`relay: ${done}`);
    for (const w of this.#ledger.resettle()) this.#forgotten(w);
    this.#phase = "ready";
    this.#pump();
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.#clock.setTimeout(resolve, ms));
  }

  /** Answer with an error each request that has waited `WAIT_MS` for the service in this outage. */
  #expireWaiting(outage: Outage): void {
    const expired = this.#ledger.expired(outage, this.#target.unavailable);
    if (expired.length === 0) return;
    if (!outage.warned) {
      outage.warned = true;
      log.warn(`relay: ${this.#target.unavailable}; requests that wait ${WAIT_MS / 1000} s get an error`);
    }
    for (const { id, message } of expired) this.#settle(id, message);
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
    this.#phase = "closed";
    this.#ledger.refuseAll(`hermit: ${message}`);
    this.#onRefused(message);
  }

  #answerError(id: RequestId, message: string, code: number = RpcCode.InternalError): void {
    this.#out(errorLine(id, code, message));
  }

  /** The error a relay refused for good ends with (exit 2). */
  refusalError(): HermitError | undefined {
    return this.#refusal ? new HermitError(this.#refusal, Exit.usage) : undefined;
  }
}

const INITIALIZED = JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" });
