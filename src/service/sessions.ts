/**
 * The standalone service's MCP sessions: one Streamable HTTP session transport and one session
 * server per client, all in front of the same gateway (one shared set of upstream processes).
 * Unknown session ids get 404; past `serve.max_sessions`, initialize gets 503. A client counts as
 * active while it holds an event stream open or made a request recently; a session whose stream
 * dropped (its relay or host was killed) and that did not come back within a grace period is
 * closed, and so is one left unused (a leaked session never keeps a host-launched service up).
 * Draining: new sessions get 503, and a request of an existing session waits until that session
 * has been quiet for a moment (its answers have reached the client), then gets 503 too, so the
 * client moves to another replica without losing an answer; the registry reports when no request
 * is in flight any more.
 */
import { randomUUID } from "node:crypto";
import { log } from "../log.ts";
import type { Gateway } from "../mcp/gateway.ts";
import { createSessionServer, type SessionServer } from "../mcp/server.ts";
import { HTTP_REFUSED, jsonRpcError, SESSION_NOT_FOUND } from "./http_errors.ts";
import { HttpSessionTransport, type StreamOptions } from "./http_session.ts";

/** A session without a stream or a request for this long is closed (a client that just stopped). */
const IDLE_MS = 30 * 60_000;
/** A session that never opened a stream, or whose stream closed, is active this long after its last request. */
const ACTIVE_GRACE_MS = 10_000;
/** Draining: a session's held request is refused once the session answered nothing for this long. */
const QUIET_MS = 200;
/** How often sessions are swept (and the active count recomputed). */
const SWEEP_MS = 2000;

export interface SessionLimits extends StreamOptions {
  maxSessions: number;
}

interface Entry {
  id: string;
  transport: HttpSessionTransport;
  session: SessionServer;
  lastSeen: number;
  /** When its last stream closed, if it has none open now. */
  streamClosedAt?: number;
  client?: string;
}

/** What the operator sees of one session (behind the token). */
export interface SessionInfo {
  session: string;
  client?: string;
  requests: number;
  in_flight: number;
  streams: number;
}

const draining = (what: string) =>
  jsonRpcError(
    503,
    HTTP_REFUSED,
    `Service Unavailable: this service is stopping (draining); ${what}`,
    { "retry-after": "1" },
  );

export class SessionRegistry {
  readonly #gateway: Gateway;
  readonly #limits: SessionLimits;
  readonly #sessions = new Map<string, Entry>();
  readonly #sweeper: ReturnType<typeof setInterval>;
  #active = 0;
  /** Sessions being opened (initialize not answered yet). */
  #opening = 0;
  #onActive?: (active: number) => void;
  #draining = false;
  #drained?: () => void;
  /** Resolves when draining ends: held requests are then refused. */
  #drainEnded?: Promise<void>;
  #endDrain?: () => void;

  constructor(gateway: Gateway, limits: SessionLimits) {
    this.#gateway = gateway;
    this.#limits = limits;
    this.#sweeper = setInterval(() => this.#sweep(), SWEEP_MS);
    (this.#sweeper as { unref?: () => void }).unref?.();
  }

  get count(): number {
    return this.#sessions.size;
  }

  /** Clients that hold an event stream or made a request lately. */
  get active(): number {
    return this.#active;
  }

  /** Requests taken by some session and not answered yet. */
  get inFlight(): number {
    let n = 0;
    for (const e of this.#sessions.values()) n += e.transport.inFlight;
    return n;
  }

  details(): SessionInfo[] {
    return [...this.#sessions.values()].map((e) => ({
      session: e.id.slice(0, 8),
      client: e.client,
      requests: e.transport.requests,
      in_flight: e.transport.inFlight,
      streams: e.transport.openStreams,
    }));
  }

  /** `listener` hears the number of active clients whenever it changes. */
  onActiveChange(listener: (active: number) => void): void {
    this.#onActive = listener;
  }

  async handle(req: Request, body: unknown): Promise<Response> {
    const sid = req.headers.get("mcp-session-id");
    if (!sid) {
      if (req.method !== "POST") {
        return jsonRpcError(400, HTTP_REFUSED, "Bad Request: no mcp-session-id; send initialize first");
      }
      if (this.#draining) return draining("start the session on another replica");
      if (this.#sessions.size + this.#opening >= this.#limits.maxSessions) {
        return jsonRpcError(
          503,
          HTTP_REFUSED,
          `Service Unavailable: ${this.#limits.maxSessions} sessions are open (serve.max_sessions); retry when one ends`,
          { "retry-after": "5" },
        );
      }
      this.#opening++; // a place is taken before the first await: concurrent initializes count too
      try {
        return await this.#open(req, body);
      } finally {
        this.#opening--;
      }
    }
    const entry = this.#sessions.get(sid);
    if (!entry) {
      return jsonRpcError(404, SESSION_NOT_FOUND, "Session not found; start a new session with initialize");
    }
    entry.lastSeen = Date.now();
    if (req.method === "POST") {
      if (this.#draining && carriesRequests(body)) return await this.#hold(entry);
      return entry.transport.handlePost(req, body);
    }
    if (req.method === "GET") {
      // resuming a stream of a call in flight is finishing it; a new event stream is not
      if (this.#draining && !req.headers.get("last-event-id")) return draining("start a new session");
      return entry.transport.handleGet(req);
    }
    if (req.method === "DELETE") {
      this.#close(entry, "client ended the session");
      return new Response(null, { status: 200 });
    }
    return new Response("Method not allowed\n", { status: 405, headers: { allow: "GET, POST, DELETE" } });
  }

  async #open(req: Request, body: unknown): Promise<Response> {
    const id = randomUUID();
    const session = createSessionServer(this.#gateway);
    const transport = new HttpSessionTransport(this.#limits);
    transport.sessionId = id;
    const entry: Entry = { id, transport, session, lastSeen: Date.now() };
    transport.onchange = () => this.#streamsChanged(entry);
    transport.onclose = () => this.#close(entry, "transport closed");
    await session.connect(transport);
    const res = await transport.handlePost(req, body);
    if (res.status !== 200) {
      // not an initialize (or refused): nothing to keep
      session.detach();
      void session.server.close().catch(() => {});
      return res;
    }
    entry.client = session.server.getClientVersion()?.name;
    this.#sessions.set(id, entry);
    log.info(`client connected (session ${id.slice(0, 8)}; ${this.#sessions.size} now)`);
    this.#recount();
    return res;
  }

  #streamsChanged(entry: Entry): void {
    if (entry.transport.openStreams === 0) entry.streamClosedAt ??= Date.now();
    else entry.streamClosedAt = undefined;
    if (this.#draining && this.inFlight === 0) this.#drained?.();
  }

  /** Draining: answer once the session is quiet (or draining ended), so the client moves on. */
  async #hold(entry: Entry): Promise<Response> {
    const quiet = async () => {
      while (this.#sessions.has(entry.id)) {
        const t = entry.transport;
        const wait = t.inFlight > 0 ? QUIET_MS : t.lastAnswerAt + QUIET_MS - Date.now();
        if (wait <= 0) return;
        await new Promise((r) => setTimeout(r, wait));
      }
    };
    await Promise.race([quiet(), this.#drainEnded]);
    return draining("start a new session on another replica");
  }

  /**
   * Stop taking sessions and new requests; resolves once no request is in flight (the caller
   * bounds the wait). `end()` then refuses what was held.
   */
  drain(): { idle: Promise<void>; end(): void } {
    this.#draining = true;
    this.#drainEnded = new Promise((resolve) => (this.#endDrain = resolve));
    const idle = new Promise<void>((resolve) => {
      this.#drained = resolve;
      if (this.inFlight === 0) resolve();
    });
    return { idle, end: () => this.#endDrain?.() };
  }

  #close(entry: Entry, why: string): void {
    if (this.#sessions.get(entry.id) !== entry) return;
    this.#sessions.delete(entry.id);
    entry.session.detach();
    void entry.transport.close();
    void entry.session.server.close().catch(() => {});
    log.info(`client left (session ${entry.id.slice(0, 8)}: ${why}; ${this.#sessions.size} now)`);
    if (this.#draining && this.inFlight === 0) this.#drained?.();
    this.#recount();
  }

  /** Close sessions whose client is gone; recount the active ones. */
  #sweep(): void {
    const now = Date.now();
    for (const e of [...this.#sessions.values()]) {
      if (e.transport.openStreams > 0 || e.transport.inFlight > 0) continue;
      const quietFor = now - Math.max(e.lastSeen, e.streamClosedAt ?? 0);
      if (e.streamClosedAt !== undefined && quietFor >= ACTIVE_GRACE_MS) {
        this.#close(e, "its event stream closed");
      } else if (now - e.lastSeen >= IDLE_MS) this.#close(e, "idle");
    }
    this.#recount();
  }

  #recount(): void {
    const now = Date.now();
    let active = 0;
    for (const e of this.#sessions.values()) {
      const t = e.transport;
      if (t.openStreams > 0 || t.inFlight > 0 || now - e.lastSeen < ACTIVE_GRACE_MS) active++;
    }
    if (active === this.#active) return;
    this.#active = active;
    this.#onActive?.(active);
  }

  closeAll(): void {
    clearInterval(this.#sweeper);
    this.#endDrain?.();
    for (const e of [...this.#sessions.values()]) this.#close(e, "service stopping");
  }
}

/** Does a POST body hold a request (as opposed to only notifications or responses)? */
function carriesRequests(body: unknown): boolean {
  const all = Array.isArray(body) ? body : [body];
  return all.some((m) => typeof m === "object" && m !== null && "method" in m && "id" in m);
}
