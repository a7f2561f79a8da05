/**
 * The relay: what `hermit serve DIR` becomes for a standalone adapter (or with `--serve-url`). It
 * passes raw JSON-RPC both ways between the host (stdio) and the shared service (Streamable HTTP,
 * including the service's event stream), so the host's own `initialize` and capabilities reach
 * the service. It must not die while its host lives: when the service goes away it finds or
 * relaunches one, replays the host's `initialize` (or sends it again, if it was never answered),
 * retries the requests that are safe to repeat (reads, and calls of read-only tools) and answers a
 * write call it cannot confirm with an "outcome uncertain" error. A request that waits 30 s for a
 * service that is not there gets an error. It exits when its host goes away, or — with an error
 * naming the cause and the fix — when the service refuses it for good (a wrong token).
 */
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { JSONRPCMessage, JSONRPCRequest, RequestId } from "@modelcontextprotocol/sdk/types.js";
import { Exit, HermitError, messageOf } from "../errors.ts";
import { log } from "../log.ts";
import { DRAIN_MS, trackInFlight } from "../mcp/inflight.ts";
import { sessionEnd } from "../mcp/session.ts";
import { sleep, within } from "../process/wait.ts";
import { type Refusal, refusalOf } from "./access.ts";
import { closeService, openService, type ServiceAddress, sessionAlive } from "./relay_connection.ts";
import {
  backoffMs,
  expiredRequests,
  isRequest,
  isResponse,
  neverDelivered,
  type Outage,
  settleSent,
  uncertainMessage,
  WAIT_MS,
  type Waiting,
} from "./relay_policy.ts";
import type { WarmAnswers } from "./warm_answers.ts";

export interface RelayTarget {
  /** Find (or launch) the service; undefined when none runs and none may be started. */
  locate(): Promise<ServiceAddress | undefined>;
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
/** How long a lost connection's sends in transit get to settle before it is closed. */
const SETTLE_MS = 3000;

export class Relay {
  readonly #target: RelayTarget;
  readonly #host = new StdioServerTransport();
  #service: StreamableHTTPClientTransport | undefined;
  #connectedAt = 0;
  /** warming: no service yet (answering what the manifest and cache can); reconnecting: lost it. */
  #phase: "connecting" | "warming" | "ready" | "reconnecting" | "closed" = "connecting";
  readonly #warm: WarmAnswers | undefined;
  readonly #queue: JSONRPCMessage[] = [];
  readonly #pending = new Map<RequestId, Waiting>();
  /** Requests handed to a service (as opposed to queued): only these can be "in flight". */
  readonly #sent = new Set<RequestId>();
  readonly #readOnly = new Set<string>();
  /** Sends to the service not finished yet (a POST's answer, or its failure). */
  readonly #sending = new Set<Promise<void>>();
  #init: JSONRPCRequest | undefined;
  #initialized = false;
  #outage: Outage | undefined;
  /** Why the service refused this relay for good; ends `run` with that error. */
  #refusal: string | undefined;
  readonly #refused: Promise<string>;
  #onRefused!: (message: string) => void;

  constructor(target: RelayTarget, warm?: WarmAnswers) {
    this.#target = target;
    this.#warm = warm;
    this.#refused = new Promise((resolve) => (this.#onRefused = resolve));
  }

  /**
   * Attach to the service (`first`), or — with no service yet — answer the host from the
   * manifest and cache while `target.locate()` starts one; then relay until the host goes away.
   * Throws (after answering what the host asked) when the service refuses the relay.
   */
  async run(first: ServiceAddress | undefined): Promise<number> {
    this.#host.onmessage = (m) => this.#fromHost(m);
    const inFlight = trackInFlight(this.#host);
    const ended = sessionEnd(this.#host);
    if (first) {
      await this.#attach(first, false);
      await this.#host.start();
      this.#phase = "ready";
      this.#flush();
    } else {
      this.#phase = "warming";
      await this.#host.start();
      void this.#connectLoop("the service is starting");
    }
    const why = await Promise.race([ended, this.#refused]);
    log.debug(`relay ends: ${why}`);
    // a host that closes stdin right after sending (a script, a pipe) still gets its answers
    if (why.includes("stdin")) await inFlight.idle(DRAIN_MS);
    else if (this.#refusal) await inFlight.idle(1000); // the error answers reach the host
    this.#phase = "closed";
    if (this.#service) await closeService(this.#service);
    if (this.#refusal) throw new HermitError(this.#refusal, Exit.usage);
    return Exit.ok;
  }

  #fromHost(m: JSONRPCMessage): void {
    if (this.#refusal) {
      if (isRequest(m)) this.#answerError(m.id, `hermit: ${this.#refusal}`);
      return;
    }
    if (this.#phase === "warming" && this.#answerWarm(m)) return;
    if (isRequest(m)) {
      if (m.method === "initialize") this.#init = m;
      this.#pending.set(m.id, { req: m, at: Date.now() });
    } else if ("method" in m && m.method === "notifications/initialized") this.#initialized = true;
    if (this.#phase !== "ready") this.#queue.push(m);
    else this.#send(m);
  }

  /** Before the service is up: answer initialize (and tools/list when the cache knows it all). */
  #answerWarm(m: JSONRPCMessage): boolean {
    if (!this.#warm || !("method" in m)) return false;
    if (isRequest(m) && m.method === "initialize") {
      this.#init = m; // replayed to the service once it is up
      const result = this.#warm.initialize(
        (m.params as { protocolVersion?: unknown } | undefined)?.protocolVersion,
      );
      this.#host.send({ jsonrpc: "2.0", id: m.id, result }).catch(() => {});
      return true;
    }
    if (m.method === "notifications/initialized" && this.#init && !this.#sent.has(this.#init.id)) {
      this.#initialized = true; // sent with the replay
      return true;
    }
    if (isRequest(m) && m.method === "tools/list") {
      const result = this.#warm.toolsList();
      if (!result) return false;
      for (const t of result.tools) {
        if (t.annotations?.readOnlyHint === true) this.#readOnly.add(t.name);
      }
      this.#host.send({ jsonrpc: "2.0", id: m.id, result }).catch(() => {});
      return true;
    }
    return false;
  }

  #send(m: JSONRPCMessage): void {
    const service = this.#service;
    if (!service) return void this.#queue.push(m);
    if (isRequest(m)) this.#sent.add(m.id);
    const sending = service.send(m).catch((err) => {
      const refusal = refusalOf(err);
      // a 401/403 is answered before anything runs: like a refused connection, never delivered
      const undelivered = refusal !== undefined || neverDelivered(err);
      if (isRequest(m)) {
        if (undelivered) {
          this.#sent.delete(m.id);
          this.#queue.push(m);
        }
      } else if (!isResponse(m)) this.#queue.push(m);
      if (this.#service !== service) return;
      const fatal = refusal && this.#target.refused?.(refusal);
      if (fatal) return this.#refusedFor(fatal);
      log.warn(`relay: sending to the service failed: ${messageOf(err)}`);
      void this.#lost();
    });
    this.#sending.add(sending);
    void sending.finally(() => this.#sending.delete(sending));
  }

  #fromService(m: JSONRPCMessage): void {
    if (isResponse(m)) {
      const req = this.#pending.get(m.id)?.req;
      this.#pending.delete(m.id);
      this.#sent.delete(m.id);
      if (req) this.#outage = undefined; // the service works for the host again
      const result = (m as { result?: Record<string, unknown> }).result;
      if (req?.method === "initialize" && typeof result?.protocolVersion === "string") {
        this.#service?.setProtocolVersion(result.protocolVersion);
      }
      if (req?.method === "tools/list" && Array.isArray(result?.tools)) {
        for (const t of result.tools as { name: string; annotations?: { readOnlyHint?: boolean } }[]) {
          if (t.annotations?.readOnlyHint === true) this.#readOnly.add(t.name);
          else this.#readOnly.delete(t.name);
        }
      }
    }
    this.#host.send(m).catch(() => {});
  }

  async #attach(addr: ServiceAddress, replay: boolean): Promise<void> {
    this.#service = await openService(addr, {
      onmessage: (m) => this.#fromService(m),
      onerror: (err, transport) => {
        if (this.#service === transport && this.#phase === "ready") {
          log.debug(`relay: service stream: ${messageOf(err)}`);
          void this.#probe(addr, transport);
        }
      },
    }, replay && this.#init ? { init: this.#init, initialized: this.#initialized } : undefined);
    this.#connectedAt = Date.now();
  }

  /** The event stream failed: is the service (the one holding this session) still there? */
  async #probe(addr: ServiceAddress, transport: StreamableHTTPClientTransport): Promise<void> {
    if (await sessionAlive(addr, transport)) return;
    if (this.#service === transport) await this.#lost();
  }

  /** The service is gone: find or relaunch one, re-initialize, then settle what was in flight. */
  async #lost(): Promise<void> {
    if (this.#phase !== "ready") return;
    this.#phase = "reconnecting";
    const old = this.#service;
    this.#service = undefined;
    // what was on its way when the service went away settles first (an answer, or a refusal that
    // shows it never ran), so a request still in transit is not taken for lost mid-way
    await within(Promise.allSettled([...this.#sending]), SETTLE_MS);
    void old?.close().catch(() => {});
    if (Date.now() - this.#connectedAt >= STEADY_MS) this.#outage = undefined;
    log.warn("relay: lost the service; reconnecting");
    await this.#connectLoop("reconnected to the service");
  }

  /**
   * Find (or launch) a service until one answers, pacing the attempts over the whole outage;
   * attach, replaying the host's initialize if the host already has its answer; settle what was
   * in flight; then relay what waited.
   */
  async #connectLoop(done: string): Promise<void> {
    const phase = this.#phase;
    const outage = this.#outage ??= { since: Date.now(), connects: 0, warned: false };
    for (let attempt = 1; this.#phase === phase; attempt++) {
      const tries = outage.connects + attempt - 1;
      if (tries > 0) {
        this.#expireWaiting(outage);
        await sleep(backoffMs(tries));
        if (this.#phase !== phase) return;
      }
      try {
        const addr = await this.#target.locate();
        if (addr) {
          await this.#attach(addr, this.#init !== undefined && !this.#pending.has(this.#init.id));
          break;
        }
      } catch (err) {
        const refusal = refusalOf(err);
        const fatal = refusal && this.#target.refused?.(refusal);
        if (fatal) return this.#refusedFor(fatal);
        log.debug(`relay: attempt ${attempt} to reach the service: ${messageOf(err)}`);
      }
    }
    if (this.#phase !== phase) return;
    outage.connects++;
    log.info(`relay: ${done}`);
    const { resend, uncertain } = settleSent(this.#pending.values(), this.#sent, this.#readOnly);
    for (const req of resend) this.#sent.delete(req.id);
    for (const req of uncertain) this.#settle(req.id, uncertainMessage(req));
    this.#queue.unshift(...resend);
    this.#phase = "ready";
    this.#flush();
  }

  /** Answer with an error each request that has waited `WAIT_MS` for the service in this outage. */
  #expireWaiting(outage: Outage): void {
    const expired = expiredRequests(
      this.#pending.values(),
      this.#sent,
      this.#readOnly,
      outage,
      Date.now(),
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
  #settle(id: RequestId, message: string): void {
    this.#pending.delete(id);
    this.#sent.delete(id);
    const at = this.#queue.findIndex((m) => isRequest(m) && m.id === id);
    if (at >= 0) this.#queue.splice(at, 1);
    this.#answerError(id, message);
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
    this.#onRefused(message);
  }

  #answerError(id: RequestId, message: string): void {
    this.#host.send({ jsonrpc: "2.0", id, error: { code: -32603, message } }).catch(() => {});
  }

  #flush(): void {
    for (const m of this.#queue.splice(0)) this.#send(m);
  }
}
