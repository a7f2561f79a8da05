/**
 * One session of a relay on its service, spoken as raw Streamable HTTP (over `plainFetch` for a
 * service on loopback, the runtime's `fetch` elsewhere: `fetchFor`; connections kept alive): each
 * message POSTed as the line the host wrote, the answer read as JSON or as an SSE stream (resumed
 * with `Last-Event-ID` when the service closes it early, SEP-1699), the service's own stream held
 * open with GET (resumed the same way), and the session DELETEd when the relay is done with it;
 * nothing it reads reaches the relay after that. What a POST came to is a tagged `PostResult`
 * (`link_outcomes.ts`), so the relay decides from the status and the transport's own error codes,
 * never from message text.
 */
import type { Refusal } from "../service/access.ts";
import { fetchFor } from "../service/endpoint.ts";
import type { Clock } from "../platform/clock.ts";
import type { HttpAnswer } from "../platform/http_answer.ts";
import type { FetchLike } from "../platform/plain_fetch.ts";
import { classify, type Message, messageIn } from "./jsonrpc.ts";
import {
  describe,
  neverReached,
  noStream,
  postNotTaken,
  type PostResult,
  type StreamOpen,
} from "./link_outcomes.ts";
import { SseDecoder } from "./sse.ts";

export interface ServiceAddress {
  url: string;
  token?: string;
}

export interface LinkHandlers {
  /**
   * Every message the service sends (answers, its requests, notifications), in order; none after
   * `close()`.
   */
  onMessage(m: Message): void;
  /**
   * The GET stream broke; resolve true to open it again (the service is still there), false when
   * the relay gives this link up.
   */
  streamBroke(why: string): Promise<boolean>;
  /** The GET stream was refused (401/403) or its session is gone (404). */
  streamRefused(r: Refusal | "session-gone"): void;
}

/** How long a stream that ended with nothing in between is retried before the link is given up. */
const STREAM_RETRIES = 5;
/** How many times one POST's stream is resumed before its answer counts as lost. */
const RESUMES = 3;

export class ServiceLink {
  readonly #url: string;
  readonly #fetch: FetchLike;
  readonly #auth: string | undefined;
  readonly #handlers: LinkHandlers;
  readonly #clock: Clock;
  readonly #abort = new AbortController();
  #session: string | undefined;
  #version: string | undefined;
  #retryMs: number | undefined;
  #streaming = false;
  #closed = false;

  constructor(addr: ServiceAddress, handlers: LinkHandlers, clock: Clock) {
    this.#url = addr.url;
    this.#fetch = fetchFor(addr.url);
    this.#auth = addr.token ? `Bearer ${addr.token}` : undefined;
    this.#handlers = handlers;
    this.#clock = clock;
  }

  get sessionId(): string | undefined {
    return this.#session;
  }

  setProtocolVersion(v: string): void {
    this.#version = v;
  }

  #headers(extra: Record<string, string>): Record<string, string> {
    const h: Record<string, string> = { ...extra };
    if (this.#auth) h.authorization = this.#auth;
    if (this.#session) h["mcp-session-id"] = this.#session;
    if (this.#version) h["mcp-protocol-version"] = this.#version;
    return h;
  }

  /** POST one message (`text`, as the host wrote it); `id` when it is a request. */
  async post(text: string, id?: string | number): Promise<PostResult> {
    if (this.#closed) return { kind: "failed", delivered: false, why: "the connection is closed" };
    let res: HttpAnswer;
    try {
      res = await this.#fetch(this.#url, {
        method: "POST",
        headers: this.#headers({
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        }),
        body: text,
        signal: this.#abort.signal,
      });
    } catch (err) {
      return { kind: "failed", delivered: !neverReached(err), why: describe(err) };
    }
    const session = res.headers.get("mcp-session-id");
    if (session) this.#session = session;
    if (!res.ok) {
      const not = {
        status: res.status,
        statusText: res.statusText,
        retryAfter: res.headers.get("retry-after"),
      };
      return postNotTaken(not, await res.text().catch(() => ""), this.#session !== undefined);
    }
    const type = (res.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
    if (id === undefined || res.status === 202 || !res.body) {
      await res.body?.cancel().catch(() => {});
      return { kind: "accepted" };
    }
    if (type === "application/json") return this.#json(res, id);
    if (type === "text/event-stream") return await this.#answerStream(res, id);
    await res.body.cancel().catch(() => {});
    return { kind: "failed", delivered: true, why: `the service answered with content type '${type}'` };
  }

  async #json(res: HttpAnswer, id: string | number): Promise<PostResult> {
    let text: string;
    let body: unknown;
    try {
      text = await res.text();
      body = JSON.parse(text);
    } catch (err) {
      return { kind: "failed", delivered: true, why: `the answer was cut off (${describe(err)})` };
    }
    // a single message goes on as the service wrote it (re-serialized only if it spans lines)
    const single = !Array.isArray(body);
    let answered = false;
    for (const v of single ? [body] : body as unknown[]) {
      const m = classify(v, single ? text.trim() : undefined);
      answered ||= m.kind === "response" && m.id === id;
      this.#deliver(m);
    }
    return answered
      ? { kind: "answered" }
      : { kind: "failed", delivered: true, why: "the answer was missing" };
  }

  /** Read a POST's SSE stream until its answer; resume it when the service closes it early. */
  async #answerStream(res: HttpAnswer, id: string | number): Promise<PostResult> {
    const sse = new SseDecoder();
    let answered = false;
    const onEvent = (m: Message) => {
      answered ||= m.kind === "response" && m.id === id;
      this.#deliver(m);
    };
    let broke = await this.#read(res, sse, onEvent);
    for (let resume = 0; !answered && sse.lastEventId !== undefined && resume < RESUMES; resume++) {
      if (this.#closed) break;
      await this.#pause(this.#retryMs ?? 1000);
      const again = await this.#get(sse.lastEventId);
      if (again.kind !== "stream") {
        broke = again.kind === "error" ? again.why : `resuming the answer's stream got ${again.kind}`;
        continue;
      }
      broke = await this.#read(again.res, sse, onEvent);
    }
    if (answered) return { kind: "answered" };
    return {
      kind: "failed",
      delivered: true,
      why: broke ?? "the service ended the answer's stream without it",
    };
  }

  /** Pass a message on, unless the link was closed (a read that ended just as it was aborted). */
  #deliver(m: Message): void {
    if (!this.#closed) this.#handlers.onMessage(m);
  }

  /** Read SSE events into `onEvent` until the stream ends; the reason when it broke. */
  async #read(res: HttpAnswer, sse: SseDecoder, onEvent: (m: Message) => void): Promise<string | undefined> {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return undefined;
        for (const e of sse.push(decoder.decode(value, { stream: true }))) {
          if (e.retry !== undefined) this.#retryMs = e.retry;
          const m = messageIn(e);
          if (m) onEvent(m);
        }
      }
    } catch (err) {
      return describe(err);
    } finally {
      reader.releaseLock();
    }
  }

  async #get(lastEventId?: string): Promise<StreamOpen> {
    let res: HttpAnswer;
    try {
      res = await this.#fetch(this.#url, {
        method: "GET",
        headers: this.#headers({
          accept: "text/event-stream",
          ...(lastEventId ? { "last-event-id": lastEventId } : {}),
        }),
        signal: this.#abort.signal,
      });
    } catch (err) {
      return { kind: "error", why: describe(err) };
    }
    if (res.ok && res.body) return { kind: "stream", res };
    return noStream(res, await res.text().catch(() => ""));
  }

  /**
   * Hold the service's own stream open (its requests and notifications, and how the service counts
   * this relay as a client): reopened, from the last event, while the relay says the service is
   * still there.
   */
  openEventStream(): void {
    if (this.#streaming || this.#closed) return;
    this.#streaming = true;
    void this.#streamLoop();
  }

  async #streamLoop(): Promise<void> {
    const sse = new SseDecoder();
    let quiet = 0;
    while (!this.#closed) {
      const got = await this.#get(sse.lastEventId);
      if (this.#closed) return;
      if (got.kind === "none") return; // the service offers no stream: fine
      if (got.kind === "gone") return this.#handlers.streamRefused("session-gone");
      if (got.kind === "refused") return this.#handlers.streamRefused(got.r);
      let why: string;
      let events = 0;
      if (got.kind === "stream") {
        why = await this.#read(got.res, sse, (m) => (events++, this.#deliver(m))) ??
          "the service ended its stream";
      } else why = got.why;
      if (this.#closed) return;
      quiet = events > 0 ? 0 : quiet + 1;
      if (quiet > STREAM_RETRIES || !(await this.#handlers.streamBroke(why))) return;
      await this.#pause(this.#retryMs ?? Math.min(250 * 2 ** quiet, 5000));
    }
  }

  #pause(ms: number): Promise<void> {
    return new Promise((resolve) => this.#clock.setTimeout(resolve, ms));
  }

  /**
   * Does the service still hold this session? Asked of the session itself (a GET for its stream),
   * not of `/health`: behind a balancer any replica answers that, and only the one holding the
   * session knows it. False when nothing answers, or the answer is 404 or a refused token; true
   * otherwise (409: its stream is open; 503: draining, still finishing what it started).
   */
  async sessionAlive(): Promise<boolean> {
    if (!this.#session || this.#closed) return false;
    try {
      const res = await this.#fetch(this.#url, {
        method: "GET",
        headers: this.#headers({ accept: "text/event-stream" }),
        signal: AbortSignal.timeout(2000),
      });
      await res.body?.cancel().catch(() => {});
      return res.status !== 404 && res.status !== 401 && res.status !== 403;
    } catch {
      return false;
    }
  }

  /** Stop everything and end the session on the service (briefly: the service may be gone). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#abort.abort();
    if (!this.#session) return;
    try {
      const res = await this.#fetch(this.#url, {
        method: "DELETE",
        headers: this.#headers({}),
        signal: AbortSignal.timeout(1000),
      });
      await res.body?.cancel().catch(() => {});
    } catch { /* gone already */ }
  }
}
