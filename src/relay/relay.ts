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
import { type LinkHandlers, type PostResult, type ServiceAddress, ServiceLink } from "./link.ts";
import {
  backoffMs,
  expiredRequests,
  type Outage,
  settleSent,
  uncertainMessage,
  WAIT_MS,
  type Waiting,
} from "./policy.ts";
import type { WarmAnswers } from "./warm.ts";

export interface RelayTarget {
  /** Find (or launch) the service; undefined when none runs and none may be started. */
  locate(): Promise<ServiceAddress | undefined>;
  /** Is the service at `addr` still there? Asked when its event stream breaks. */
  healthy(addr: ServiceAddress): Promise<boolean>;
  /** Said when no service can be found while the host waits. */
  unavailable: string;
  /**
   * What to say when the service answers 401 or 403: the relay then ends with that error. Without
   * it the relay finds the service again (a relaunched local service has a new token).
   */
  refused?(r: Refusal): string;
}

/** Where the relay writes lines for the host. */
export type HostOut = (line: string) => void;

/** What the relay needs of a session on a service (a `ServiceLink`; tests pass their own). */
export type Link = Pick<ServiceLink, "post" | "openEventStream" | "close" | "setProtocolVersion">;
export type Connect = (addr: ServiceAddress, handlers: LinkHandlers, clock: Clock) => Link;
const connectHttp: Connect = (addr, handlers, clock) => new ServiceLink(addr, handlers, clock);

/** A service refused a connection attempt (401/403). */
export class ServiceRefused extends Error {
  constructor(readonly refusal: Refusal) {
    super(`refused (${refusal.status}): ${refusal.detail}`);
    this.name = "ServiceRefused";
  }
}

type Request = Extract<Message, { kind: "request" }>;
interface Pending extends Waiting {
  msg: Request;
}

/** A connection that held this long ends the outage before it. */
const STEADY_MS = 30_000;
/** How long the service may take to answer a replayed `initialize`. */
const REPLAY_MS = 30_000;
let replays = 0;

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
  readonly #queue: Message[] = [];
  readonly #pending = new Map<RequestId, Pending>();
  /** Requests handed to a service (as opposed to queued): only these can be "in flight". */
  readonly #sent = new Set<RequestId>();
  readonly #readOnly = new Set<string>();
  #init: Request | undefined;
  #initialized = false;
  #replay: { id: string; answer(m: Message): void } | undefined;
  #outage: Outage | undefined;
  #refusal: string | undefined;
  readonly refused: Promise<string>;
  #onRefused!: (message: string) => void;
  readonly #idle = new Set<() => void>();

  constructor(
    opts: { target: RelayTarget; out: HostOut; clock: Clock; warm?: WarmAnswers; connect?: Connect },
  ) {
    this.#target = opts.target;
    this.#connect = opts.connect ?? connectHttp;
    this.#out = opts.out;
    this.#clock = opts.clock;
    this.#warm = opts.warm;
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
    return this.#pending.size;
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
      this.#pending.set(m.id, { req: m.req, msg: m, at: this.#clock.now() });
    } else if (m.kind === "notification") {
      if (!this.#init) return log.debug(`relay: '${m.method}' before initialize, dropped`);
      if (m.method === "notifications/initialized") {
        this.#initialized = true;
        return this.#open ? this.#sendInitialized() : undefined; // sent once the session is open
      }
    } else if (!this.#open) {
      return; // an answer to a service's request belongs to the session that asked
    }
    this.#queue.push(m);
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
      for (const t of result.tools) if (t.annotations?.readOnlyHint === true) this.#readOnly.add(t.name);
      this.#out(resultLine(m.id, result));
      return true;
    }
    return false;
  }

  /** Send what can go now: everything once the session is open; before that only the initialize. */
  #pump(): void {
    if (this.#phase !== "ready" || !this.#link) return;
    if (this.#open) {
      for (const m of this.#queue.splice(0)) void this.#send(m);
      return;
    }
    const at = this.#queue.findIndex((m) => m === this.#init);
    if (at >= 0 && !this.#sent.has(this.#init!.id)) void this.#send(this.#queue.splice(at, 1)[0]);
  }

  async #send(m: Message): Promise<void> {
    const link = this.#link;
    if (!link || m.kind === "invalid") return void this.#queue.push(m);
    if (m.kind === "request") this.#sent.add(m.id);
    const r = await link.post(m.text, m.kind === "request" ? m.id : undefined);
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
      if (m.kind === "request") return this.#settle(m.id, what, r.code ?? RpcCode.InvalidRequest);
      return log.warn(`relay: ${what}`);
    }
    const undelivered = r.kind !== "failed" || !r.delivered;
    if (m.kind === "request" && undelivered && this.#pending.has(m.id) && this.#sent.delete(m.id)) {
      this.#queue.push(m); // it never ran: it goes again, whatever it is
    } else if (m.kind === "notification" && undelivered) this.#queue.push(m);
    if (this.#link !== link) return; // already replaced
    if (r.kind === "refused") {
      const fatal = this.#target.refused?.(r.refusal);
      if (fatal) return this.#refusedFor(fatal);
      return void this.#lost(`the service refused the relay (${r.refusal.status})`);
    }
    void this.#lost(r.kind === "session-gone" ? "the service forgot this session" : r.why);
  }

  #fromService(m: Message, link: Link): void {
    if (m.kind === "response") {
      if (this.#replay?.id === m.id) return this.#replay.answer(m);
      const waiting = this.#pending.get(m.id);
      if (!waiting) return log.debug(`relay: an answer to ${m.id}, which nothing waits for, dropped`);
      this.#pending.delete(m.id);
      this.#sent.delete(m.id);
      this.#outage = undefined; // the service works for the host again
      const { method } = waiting.msg;
      if (method === "initialize" && waiting.msg === this.#init) this.#initAnswered(m, link);
      if (method === "tools/list" && Array.isArray(m.result?.tools)) {
        for (const t of m.result.tools as { name: string; annotations?: { readOnlyHint?: boolean } }[]) {
          if (t.annotations?.readOnlyHint === true) this.#readOnly.add(t.name);
          else this.#readOnly.delete(t.name);
        }
      }
      this.#out(m.text);
      if (this.#pending.size === 0) { for (const done of [...this.#idle]) done(); }
      return;
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
      for (const q of this.#queue.splice(0)) {
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
    const link: Link = this.#connect(addr, {
      onMessage: (m) => this.#fromService(m, link),
      streamBroke: async (why) => {
        if (this.#link !== link) return false;
        log.debug(`relay: service stream: ${why}`);
        if (await this.#target.healthy(addr) && this.#link === link) return true;
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
    }, this.#clock);
    const replay = this.#init !== undefined && !this.#pending.has(this.#init.id);
    if (replay) await this.#replayOn(link);
    this.#link = link;
    this.#open = replay;
    this.#initializedSent = false;
    this.#connectedAt = this.#clock.now();
    if (replay && this.#initialized) this.#sendInitialized();
  }

  /** Open a new session for a host that already has its initialize answer: the answer stays here. */
  async #replayOn(link: Link): Promise<void> {
    const id = `hermit-relay-init-${++replays}`;
    let answered!: (m: Message) => void;
    const answer = new Promise<Message>((resolve) => (answered = resolve));
    this.#replay = { id, answer: (m) => answered(m) };
    let timer: unknown;
    const late = new Promise<"late">((
      resolve,
    ) => (timer = this.#clock.setTimeout(() => resolve("late"), REPLAY_MS)));
    try {
      const r = await Promise.race([link.post(JSON.stringify({ ...this.#init!.req, id }), id), late]);
      if (r === "late") throw new Error(`no answer to the replayed initialize within ${REPLAY_MS / 1000} s`);
      if (r.kind === "refused") throw new ServiceRefused(r.refusal);
      if (r.kind !== "answered") {
        throw new Error(
          `the replayed initialize ${r.kind === "failed" ? `failed: ${r.why}` : `got ${r.kind}`}`,
        );
      }
      const m = await answer;
      const version = m.kind === "response" ? m.result?.protocolVersion : undefined;
      if (typeof version !== "string") throw new Error("the service refused the replayed initialize");
      link.setProtocolVersion(version);
    } catch (err) {
      await link.close();
      throw err;
    } finally {
      this.#clock.clearTimeout(timer);
      this.#replay = undefined;
    }
  }

  /** The service is gone: end its session, find or relaunch one, re-initialize, settle what was in flight. */
  async #lost(why: string): Promise<void> {
    if (this.#phase !== "ready") return;
    this.#phase = "reconnecting";
    const old = this.#link;
    this.#link = undefined;
    this.#open = false;
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
    const { resend, uncertain } = settleSent(this.#pending.values(), this.#sent, this.#readOnly);
    for (const w of resend) this.#sent.delete(w.req.id);
    for (const w of uncertain) this.#settle(w.req.id, uncertainMessage(w.req));
    const queued = this.#queue.splice(0);
    this.#queue.push(...resend.map((w) => w.msg), ...queued);
    this.#phase = "ready";
    this.#pump();
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.#clock.setTimeout(resolve, ms));
  }

  /** Answer with an error each request that has waited `WAIT_MS` for the service in this outage. */
  #expireWaiting(outage: Outage): void {
    const expired = expiredRequests(
      this.#pending.values(),
      this.#sent,
      this.#readOnly,
      outage,
      this.#clock.now(),
      this.#target.unavailable,
    );
    if (expired.length === 0) return;
    if (!outage.warned) {
      outage.warned = true;
      log.warn(`relay: ${this.#target.unavailable}; requests that wait ${WAIT_MS / 1000} s get an error`);
    }
    for (const { id, message } of expired) this.#settle(id, message);
  }

  /** Answer a waiting request with an error and forget it (queued or sent). */
  #settle(id: RequestId, message: string, code: number = RpcCode.InternalError): void {
    const waiting = this.#pending.get(id);
    this.#pending.delete(id);
    this.#sent.delete(id);
    const at = this.#queue.findIndex((m) => m.kind === "request" && m.id === id);
    if (at >= 0) this.#queue.splice(at, 1);
    if (waiting?.msg === this.#init) this.#init = undefined; // never answered: the host may send another
    this.#answerError(id, message, code);
    if (this.#pending.size === 0) { for (const done of [...this.#idle]) done(); }
  }

  /** The service refuses this relay (a wrong token): answer everything waiting, then end. */
  #refusedFor(message: string): void {
    if (this.#refusal) return;
    this.#refusal = message;
    this.#phase = "closed";
    for (const id of this.#pending.keys()) this.#answerError(id, `hermit: ${message}`);
    this.#pending.clear();
    this.#sent.clear();
    this.#queue.length = 0;
    for (const done of [...this.#idle]) done();
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
