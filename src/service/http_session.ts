/**
 * One client's Streamable HTTP session on the service side: the MCP SDK `Transport` its session
 * server talks through. A POST carrying requests is answered with plain JSON when the answers come
 * first, and switches to SSE as soon as something else comes for those requests (progress, log
 * messages, sampling, elicitation, approvals) or when they take longer than `jsonWaitMs`, so a
 * call that streams keeps streaming and one that does not costs no SSE. SSE events are kept in a
 * bounded event store: a client whose stream dropped (or that the service closed after
 * `streamSeconds`, SEP-1699 polling) resumes it with GET and `Last-Event-ID`. Messages are checked
 * for shape only (http_checks.ts; the session server validates what it handles). Owned by the
 * session registry, which routes by session id and decides whether a request is taken at all. A
 * POST's requests until all are answered, and the plain answers that end them, are `http_exchange.ts`.
 */
import {
  ErrorCode,
  type JSONRPCMessage,
  LATEST_PROTOCOL_VERSION,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { EventStore } from "./event_store.ts";
import { endedAnswer, type Exchange, jsonAnswer } from "./http_exchange.ts";
import { checkGet, checkPost } from "./http_checks.ts";
import { HTTP_REFUSED, jsonRpcError } from "./http_errors.ts";
import { isRequest, isResponse } from "../mcp/jsonrpc_shape.ts";
import { SseStream } from "./sse.ts";

export interface StreamOptions {
  /** How long a POST's answer may stay plain JSON before it becomes a stream. */
  jsonWaitMs: number;
  /** Close a streamed answer after this long (the client resumes it); 0: never. */
  streamSeconds: number;
  /** The reconnection delay the priming event suggests. */
  retryMs: number;
}

const GET_STREAM = "GET";
/** Clients from this version on understand priming events (empty data). */
const PRIMING_FROM = "2025-11-25";

export class HttpSessionTransport implements Transport {
  sessionId?: string;
  onmessage?: Transport["onmessage"];
  onclose?: () => void;
  onerror?: (err: Error) => void;
  /** Called when the number of open streams or of requests in flight changes. */
  onchange?: () => void;
  /** Requests taken so far (for the operator's view of sticky sessions). */
  requests = 0;

  readonly #opts: StreamOptions;
  readonly #store = new EventStore();
  readonly #exchanges = new Map<string, Exchange>();
  readonly #byRequest = new Map<RequestId, Exchange>();
  #standalone?: SseStream;
  #protocol = LATEST_PROTOCOL_VERSION;
  #initialized = false;
  #closed = false;
  #streamSeq = 0;
  #streams = 0;
  #lastAnswer = 0;

  constructor(opts: StreamOptions) {
    this.#opts = opts;
  }

  async start(): Promise<void> {}

  /** Requests taken and not answered yet. */
  get inFlight(): number {
    return this.#byRequest.size;
  }

  /** Open SSE connections (the client's event stream, streamed answers). */
  get openStreams(): number {
    return this.#streams;
  }

  /** When the last answer went out (ms since the epoch; 0: none yet). */
  get lastAnswerAt(): number {
    return this.#lastAnswer;
  }

  async handlePost(req: Request, body: unknown): Promise<Response> {
    const post = checkPost(req, body, this.#initialized);
    if ("refused" in post) return post.refused;
    const { messages, requests, batch, json, sse } = post;
    if (post.initializes) {
      this.#protocol = post.initializes;
      this.#initialized = true;
    }
    if (requests.length === 0) {
      for (const m of messages) this.onmessage?.(m);
      return new Response(null, { status: 202 });
    }
    const ids = new Set(requests.map((r) => r.id));
    if (ids.size < requests.length || requests.some((r) => this.#byRequest.has(r.id))) {
      return jsonRpcError(
        400,
        ErrorCode.InvalidRequest,
        "Invalid Request: a request with that id is still running",
      );
    }
    const ex: Exchange = {
      stream: `${++this.#streamSeq}`,
      pending: ids,
      batch,
      answers: [],
      jsonOnly: !sse,
    };
    for (const id of ex.pending) this.#byRequest.set(id, ex);
    this.#exchanges.set(ex.stream, ex);
    this.requests += requests.length;
    this.onchange?.();
    if (!json) {
      // the client takes only a stream
      this.#toStream(ex);
      for (const m of messages) this.onmessage?.(m);
      return ex.sse!.response;
    }
    const answer = new Promise<Response>((resolve) => {
      ex.decide = resolve;
      if (!ex.jsonOnly) ex.timer = setTimeout(() => this.#toStream(ex), this.#opts.jsonWaitMs);
    });
    for (const m of messages) this.onmessage?.(m);
    return await answer;
  }

  handleGet(req: Request): Response {
    const refused = checkGet(req);
    if (refused) return refused;
    const last = req.headers.get("last-event-id");
    if (last) return this.#resume(last);
    if (this.#standalone) {
      return jsonRpcError(409, HTTP_REFUSED, "Conflict: this session already has its event stream open");
    }
    const sse = this.#open();
    this.#standalone = sse;
    sse.onclose = () => this.#streamClosed(() => this.#standalone === sse && (this.#standalone = undefined));
    if (this.#protocol >= PRIMING_FROM) sse.prime(this.#store.append(GET_STREAM, ""), this.#opts.retryMs);
    return sse.response;
  }

  async send(message: JSONRPCMessage, options?: { relatedRequestId?: RequestId }): Promise<void> {
    if (this.#closed) return;
    if (isResponse(message)) {
      const ex = this.#byRequest.get(message.id);
      if (!ex) return; // answered already (a cancelled call, a closed session): nothing waits for it
      this.#byRequest.delete(message.id);
      ex.pending.delete(message.id);
      this.#lastAnswer = Date.now();
      const data = JSON.stringify(message);
      if (ex.decide) ex.answers.push(data);
      else this.#emit(ex, data);
      if (ex.pending.size === 0) this.#finish(ex);
      this.onchange?.();
      return;
    }
    const related = options?.relatedRequestId;
    const ex = related === undefined ? undefined : this.#byRequest.get(related);
    if (ex && !ex.jsonOnly) {
      if (ex.decide) this.#toStream(ex);
      this.#emit(ex, JSON.stringify(message));
      return;
    }
    // notifications about a call whose client takes JSON only have nowhere to go; requests and
    // messages of the session go on its event stream
    if (ex && !isRequest(message)) return;
    const data = JSON.stringify(message);
    const id = this.#store.append(GET_STREAM, data);
    this.#standalone?.send(id, data);
  }

  /**
   * End the session: every stream closes, and a POST still waiting for its answer gets a 500
   * saying its outcome is unknown (not a 404 or 503, which would tell a client it never ran).
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#standalone?.close();
    for (const ex of [...this.#exchanges.values()]) {
      ex.decide?.(endedAnswer());
      ex.decide = undefined;
      ex.sse?.close();
      this.#drop(ex);
    }
    this.#byRequest.clear();
    this.onchange?.();
    this.onclose?.();
  }

  #open(): SseStream {
    const sse = new SseStream(this.sessionId ? { "mcp-session-id": this.sessionId } : {});
    this.#streams++;
    this.onchange?.();
    return sse;
  }

  #streamClosed(forget: () => unknown): void {
    forget();
    this.#streams--;
    this.onchange?.();
  }

  /** The exchange's answer becomes a stream: primed, with what was already answered. */
  #toStream(ex: Exchange): void {
    clearTimeout(ex.timer);
    const sse = this.#attach(ex);
    if (this.#protocol >= PRIMING_FROM) sse.prime(this.#store.append(ex.stream, ""), this.#opts.retryMs);
    ex.decide?.(sse.response);
    ex.decide = undefined;
    for (const data of ex.answers.splice(0)) this.#emit(ex, data);
  }

  /** A new connection carries the exchange's events from now on; closed for polling after a while. */
  #attach(ex: Exchange): SseStream {
    ex.sse?.close();
    const sse = this.#open();
    ex.sse = sse;
    sse.onclose = () => this.#streamClosed(() => ex.sse === sse && (ex.sse = undefined));
    if (this.#opts.streamSeconds > 0) {
      clearTimeout(ex.timer);
      // SEP-1699: once the client holds an event id, the service may close and let it poll
      ex.timer = setTimeout(() => {
        if (ex.sse === sse && sse.hasId && ex.pending.size > 0) sse.close();
      }, this.#opts.streamSeconds * 1000);
    }
    return sse;
  }

  #emit(ex: Exchange, data: string): void {
    const id = this.#store.append(ex.stream, data);
    ex.sse?.send(id, data);
  }

  /** Every request of the exchange is answered. */
  #finish(ex: Exchange): void {
    ex.decide?.(jsonAnswer(ex, this.sessionId));
    ex.decide = undefined;
    ex.sse?.close();
    this.#drop(ex);
  }

  #drop(ex: Exchange): void {
    clearTimeout(ex.timer);
    this.#exchanges.delete(ex.stream);
  }

  /** GET with Last-Event-ID: replay what the client missed, then carry the rest of that stream. */
  #resume(last: string): Response {
    const found = this.#store.after(last);
    if (!found) {
      return jsonRpcError(
        400,
        HTTP_REFUSED,
        `Bad Request: cannot resume after event ${last}: it is not (or no longer) stored; start a new request`,
      );
    }
    const live = found.stream === GET_STREAM ? undefined : this.#exchanges.get(found.stream);
    let sse: SseStream;
    if (found.stream === GET_STREAM) {
      this.#standalone?.close();
      sse = this.#open();
      this.#standalone = sse;
      sse.onclose = () =>
        this.#streamClosed(() => this.#standalone === sse && (this.#standalone = undefined));
    } else if (live) sse = this.#attach(live);
    else {
      sse = this.#open();
      sse.onclose = () => this.#streamClosed(() => {});
    }
    for (const e of found.events) if (e.data) sse.send(String(e.id), e.data);
    if (found.stream !== GET_STREAM && !live) sse.close(); // that answer is complete
    return sse.response;
  }
}
