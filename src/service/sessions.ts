/**
 * The standalone service's MCP sessions: one Streamable HTTP transport and one session server per
 * client, all in front of the same gateway (one shared set of upstream processes). A client is
 * counted while it has an open event stream (a relay always keeps one) or has made a request
 * recently; a client whose stream dropped and who did not come back within a grace period is gone
 * (its host was killed). Unknown session ids get 404, as the spec asks.
 */
import { randomUUID } from "node:crypto";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { log } from "../log.ts";
import type { Gateway } from "../mcp/gateway.ts";
import { createSessionServer, type SessionServer } from "../mcp/server.ts";

/** A session without an open stream and without requests for this long is closed. */
const IDLE_MS = 30 * 60_000;
/** After its last stream closed, a session that makes no request for this long is gone. */
const STREAM_GRACE_MS = 10_000;

interface Entry {
  transport: WebStandardStreamableHTTPServerTransport;
  session: SessionServer;
  lastSeen: number;
  streams: number;
  /** When the last stream closed (a relay's host may be gone). */
  streamClosedAt?: number;
}

export class SessionRegistry {
  readonly #gateway: Gateway;
  readonly #sessions = new Map<string, Entry>();
  readonly #listeners = new Set<(count: number) => void>();
  readonly #sweeper: ReturnType<typeof setInterval>;

  constructor(gateway: Gateway) {
    this.#gateway = gateway;
    this.#sweeper = setInterval(() => this.#sweep(), Math.min(5000, STREAM_GRACE_MS / 2));
    (this.#sweeper as { unref?: () => void }).unref?.();
  }

  get count(): number {
    return this.#sessions.size;
  }

  onCountChange(listener: (count: number) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #changed(): void {
    for (const l of this.#listeners) l(this.#sessions.size);
  }

  async handle(req: Request, parsedBody: unknown): Promise<Response> {
    const sid = req.headers.get("mcp-session-id");
    if (sid) {
      const entry = this.#sessions.get(sid);
      if (!entry) return jsonRpcError(404, -32001, "Session not found; start a new session with initialize");
      entry.lastSeen = Date.now();
      const res = await entry.transport.handleRequest(req, { parsedBody });
      if (req.method === "DELETE") this.#close(sid, "client ended the session");
      return req.method === "GET" ? this.#watchStream(entry, res) : res;
    }
    if (req.method !== "POST") {
      return jsonRpcError(400, -32000, "Bad request: no mcp-session-id; send initialize first");
    }
    return this.#open(req, parsedBody);
  }

  async #open(req: Request, parsedBody: unknown): Promise<Response> {
    const session = createSessionServer(this.#gateway);
    let entry: Entry | undefined;
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        entry = { transport, session, lastSeen: Date.now(), streams: 0 };
        this.#sessions.set(id, entry);
        log.info(`client connected (session ${id.slice(0, 8)}; ${this.#sessions.size} now)`);
        this.#changed();
      },
    });
    transport.onclose = () => {
      const id = transport.sessionId;
      if (id && this.#sessions.get(id)?.transport === transport) this.#close(id, "transport closed");
    };
    await session.connect(transport);
    const res = await transport.handleRequest(req, { parsedBody });
    if (!entry) {
      // not an initialize (or it failed): nothing to keep
      session.detach();
      void session.server.close().catch(() => {});
    }
    return res;
  }

  /** Count an open GET event stream, and notice when it closes. */
  #watchStream(entry: Entry, res: Response): Response {
    if (!res.body || !(res.headers.get("content-type") ?? "").includes("text/event-stream")) return res;
    entry.streams++;
    entry.streamClosedAt = undefined;
    const reader = res.body.getReader();
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      entry.streams--;
      if (entry.streams === 0) entry.streamClosedAt = Date.now();
    };
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { value, done: end } = await reader.read();
          if (end) {
            finish();
            controller.close();
          } else controller.enqueue(value);
        } catch (err) {
          finish();
          controller.error(err);
        }
      },
      cancel(reason) {
        finish();
        return reader.cancel(reason);
      },
    });
    return new Response(body, { status: res.status, headers: res.headers });
  }

  #close(id: string, why: string): void {
    const entry = this.#sessions.get(id);
    if (!entry) return;
    this.#sessions.delete(id);
    entry.session.detach();
    void entry.session.server.close().catch(() => {});
    log.info(`client left (session ${id.slice(0, 8)}: ${why}; ${this.#sessions.size} now)`);
    this.#changed();
  }

  /** Close sessions whose client is gone; runs on a timer. */
  #sweep(): void {
    const now = Date.now();
    for (const [id, e] of this.#sessions) {
      if (e.streams > 0) continue;
      const since = Math.max(e.lastSeen, e.streamClosedAt ?? 0);
      if (e.streamClosedAt !== undefined && now - since >= STREAM_GRACE_MS) {
        this.#close(id, "its event stream closed");
      } else if (now - e.lastSeen >= IDLE_MS) this.#close(id, "idle");
    }
  }

  closeAll(): void {
    clearInterval(this.#sweeper);
    for (const id of [...this.#sessions.keys()]) this.#close(id, "service stopping");
  }
}

export function jsonRpcError(
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}
