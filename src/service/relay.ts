/**
 * The relay: what `hermit serve DIR` becomes for a standalone adapter (or with `--serve-url`). It
 * passes raw JSON-RPC both ways between the host (stdio) and the shared service (Streamable HTTP,
 * including the service's event stream), so the host's own `initialize` and capabilities reach
 * the service. It must not die while its host lives: when the service goes away it finds or
 * relaunches one, replays the host's `initialize`, retries the requests that are safe to repeat
 * (reads, and calls of read-only tools) and answers a write call it cannot confirm with an
 * "outcome uncertain" error. It exits when its host goes away.
 */
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { JSONRPCMessage, JSONRPCRequest, RequestId } from "@modelcontextprotocol/sdk/types.js";
import { messageOf } from "../errors.ts";
import { log } from "../log.ts";
import { sessionEnd } from "../mcp/session.ts";
import type { WarmAnswers } from "./warm_answers.ts";

export interface ServiceAddress {
  url: string;
  token?: string;
}

export interface RelayTarget {
  /** Find (or launch) the service; undefined when none runs and none may be started. */
  locate(): Promise<ServiceAddress | undefined>;
  /** Said when no service can be found while the host waits. */
  unavailable: string;
}

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

const isRequest = (m: JSONRPCMessage): m is JSONRPCRequest => "method" in m && "id" in m;
const isResponse = (m: JSONRPCMessage): m is JSONRPCMessage & { id: RequestId } =>
  !("method" in m) && "id" in m;
/** How long requests already sent may still be answered after the host closes stdin. */
const DRAIN_MS = 30_000;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class Relay {
  readonly #target: RelayTarget;
  readonly #host = new StdioServerTransport();
  #service: StreamableHTTPClientTransport | undefined;
  /** warming: no service yet (answering what the manifest and cache can); reconnecting: lost it. */
  #phase: "connecting" | "warming" | "ready" | "reconnecting" | "closed" = "connecting";
  readonly #warm: WarmAnswers | undefined;
  readonly #queue: JSONRPCMessage[] = [];
  readonly #pending = new Map<RequestId, JSONRPCRequest>();
  /** Requests handed to a service (as opposed to queued): only these can be "in flight". */
  readonly #sent = new Set<RequestId>();
  readonly #readOnly = new Set<string>();
  readonly #internal = new Map<RequestId, (m: JSONRPCMessage) => void>();
  #init: JSONRPCRequest | undefined;
  #initialized = false;
  #replays = 0;

  constructor(target: RelayTarget, warm?: WarmAnswers) {
    this.#target = target;
    this.#warm = warm;
  }

  /**
   * Attach to the service (`first`), or — with no service yet — answer the host from the
   * manifest and cache while `target.locate()` starts one; then relay until the host goes away.
   */
  async run(first: ServiceAddress | undefined): Promise<number> {
    this.#host.onmessage = (m) => this.#fromHost(m);
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
    const why = await ended;
    log.debug(`relay ends: ${why}`);
    // a host that closes stdin right after sending (a script, a pipe) still gets its answers
    if (why.includes("stdin")) {
      const deadline = Date.now() + DRAIN_MS;
      while (this.#pending.size > 0 && Date.now() < deadline) await sleep(50);
    }
    this.#phase = "closed";
    const service = this.#service;
    if (service) {
      await Promise.race([service.terminateSession().catch(() => {}), sleep(1000)]);
      await service.close().catch(() => {});
    }
    return 0;
  }

  #fromHost(m: JSONRPCMessage): void {
    if (this.#phase === "warming" && this.#answerWarm(m)) return;
    if (isRequest(m)) {
      if (m.method === "initialize") this.#init = m;
      this.#pending.set(m.id, m);
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
    service.send(m).catch((err) => {
      const refused = /refused|unable to connect|ECONNREFUSED/i.test(
        messageOf(err) + String((err as { cause?: unknown }).cause ?? ""),
      );
      if (isRequest(m)) {
        // a refused connection never delivered it; anything else may have
        if (refused) {
          this.#sent.delete(m.id);
          this.#queue.push(m);
        }
      } else if (!isResponse(m)) this.#queue.push(m);
      if (this.#service !== service) return;
      log.warn(`relay: sending to the service failed: ${messageOf(err)}`);
      void this.#lost();
    });
  }

  #fromService(m: JSONRPCMessage): void {
    if (isResponse(m)) {
      const internal = this.#internal.get(m.id);
      if (internal) {
        this.#internal.delete(m.id);
        return internal(m);
      }
      const req = this.#pending.get(m.id);
      this.#pending.delete(m.id);
      this.#sent.delete(m.id);
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
    const transport = new StreamableHTTPClientTransport(new URL(addr.url), {
      requestInit: addr.token ? { headers: { Authorization: `Bearer ${addr.token}` } } : undefined,
    });
    transport.onmessage = (m) => this.#fromService(m);
    transport.onerror = (err) => {
      if (this.#service === transport && this.#phase === "ready") {
        log.debug(`relay: service stream: ${messageOf(err)}`);
        void this.#probe(addr, transport);
      }
    };
    await transport.start();
    if (replay && this.#init) {
      const id = `hermit-relay-init-${++this.#replays}`;
      const answer = new Promise<JSONRPCMessage>((resolve, reject) => {
        this.#internal.set(id, resolve);
        setTimeout(() => reject(new Error("no answer to the replayed initialize")), 30_000);
      });
      await transport.send({ ...this.#init, id });
      const res = await answer as { result?: { protocolVersion?: string }; error?: { message: string } };
      if (res.error) throw new Error(`the service refused initialize: ${res.error.message}`);
      if (res.result?.protocolVersion) transport.setProtocolVersion(res.result.protocolVersion);
      if (this.#initialized) await transport.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    }
    this.#service = transport;
  }

  /** The event stream failed: is the service still there? */
  async #probe(addr: ServiceAddress, transport: StreamableHTTPClientTransport): Promise<void> {
    try {
      const res = await fetch(new URL("/health", addr.url), { signal: AbortSignal.timeout(2000) });
      if (res.ok) return;
    } catch { /* down */ }
    if (this.#service === transport) await this.#lost();
  }

  /** The service is gone: find or relaunch one, re-initialize, then settle what was in flight. */
  async #lost(): Promise<void> {
    if (this.#phase !== "ready") return;
    this.#phase = "reconnecting";
    const old = this.#service;
    this.#service = undefined;
    void old?.close().catch(() => {});
    log.warn("relay: lost the service; reconnecting");
    await this.#connectLoop("reconnected to the service");
  }

  /**
   * Find (or launch) a service until one answers; attach, replaying the host's initialize if
   * the host already sent it; settle what was in flight; then relay what waited.
   */
  async #connectLoop(done: string): Promise<void> {
    const phase = this.#phase;
    const since = Date.now();
    let warned = false;
    for (let attempt = 1; this.#phase === phase; attempt++) {
      try {
        const addr = await this.#target.locate();
        if (addr) {
          // replay the host's initialize only if the host already has its answer
          await this.#attach(addr, this.#init !== undefined && !this.#pending.has(this.#init.id));
          break;
        }
      } catch (err) {
        log.debug(`relay: attempt ${attempt} to reach the service: ${messageOf(err)}`);
      }
      if (!warned && Date.now() - since > 30_000) {
        warned = true;
        log.warn(`relay: ${this.#target.unavailable}; requests wait until it is back`);
        this.#failPending(`hermit: ${this.#target.unavailable}`);
      }
      await sleep(Math.min(250 * 2 ** (attempt - 1), 5000));
    }
    if (this.#phase !== phase) return;
    log.info(`relay: ${done}`);
    const retry: JSONRPCRequest[] = [];
    for (const [id, req] of [...this.#pending]) {
      if (req.method === "initialize" || !this.#sent.has(id)) continue; // queued ones go out below
      this.#sent.delete(id);
      const tool = (req.params as { name?: string } | undefined)?.name;
      const safe = IDEMPOTENT.has(req.method) ||
        (req.method === "tools/call" && tool !== undefined && this.#readOnly.has(tool));
      if (safe) retry.push(req);
      else {
        this.#pending.delete(id);
        this.#answerError(
          id,
          `outcome uncertain: the hermit service went away while ${
            tool ?? req.method
          } was running; it may or may not have taken effect. Check before retrying.`,
        );
      }
    }
    this.#queue.unshift(...retry);
    this.#phase = "ready";
    this.#flush();
  }

  /** Answer every waiting request with an error (the service has been gone too long). */
  #failPending(message: string): void {
    const failed = new Set<RequestId>();
    for (const [id, req] of [...this.#pending]) {
      if (req.method === "initialize") continue;
      this.#pending.delete(id);
      this.#sent.delete(id);
      failed.add(id);
      this.#answerError(id, message);
    }
    const keep = this.#queue.filter((m) => !(isRequest(m) && failed.has(m.id)));
    this.#queue.splice(0, this.#queue.length, ...keep);
  }

  #answerError(id: RequestId, message: string): void {
    this.#host.send({ jsonrpc: "2.0", id, error: { code: -32603, message } }).catch(() => {});
  }

  #flush(): void {
    for (const m of this.#queue.splice(0)) this.#send(m);
  }
}
