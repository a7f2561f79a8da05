/**
 * `fetch` for plain `http://` URLs, written on a TCP socket: what a relay uses to talk to a
 * service on this machine. Bun's own `fetch` hands every request to an HTTP-client thread with its
 * own event loop and TLS machinery, which costs a relay 60–70 µs of CPU and about 90 µs of wall
 * time per call on a loopback hop; here the request is one write on the relay's own loop and the
 * answer is parsed where it lands (`http1.ts`). One request per connection at a time; a connection
 * is kept alive and reused if it was idle under `IDLE_MS` (well inside the service's 30 s). A
 * GET, HEAD or DELETE whose reused connection closes before a single byte of answer is sent again
 * once on a new one (the service may have closed it while idle); a POST is not, since the close
 * may as well mean the service read it, ran it and died (behind a TCP balancer, a second try would
 * reach another replica, whose "unknown session" would hide that): it fails with ECONNRESET, may
 * have run, as does a retry that fails. A connection whose answer came before the whole
 * request went out (a 413 judged from the length) is closed, not reused. A body framed by its
 * length is read whole before the answer resolves; a chunked or close-framed one (an SSE stream)
 * is read as it comes. The answer is a light `HttpAnswer` (`http_answer.ts`), not a native
 * `Response`. Errors keep the codes `fetch`'s do (ECONNREFUSED when nothing listens, ECONNRESET
 * when the connection dies after the request went out), and an abort rejects with the signal's
 * reason. The sockets are `tcp_wire.ts`'s.
 */
import { Buffer } from "node:buffer";
import {
  type BodyFraming,
  type ParseEvent,
  requestHead,
  type ResponseHead,
  ResponseParser,
} from "./http1.ts";
import { AnswerBody, type HttpAnswer, PlainAnswer } from "./http_answer.ts";
import { connectWire, type Wire, type WireEvents } from "./tcp_wire.ts";

export interface PlainInit {
  method: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

/** The part of `fetch` hermit uses, so the two can stand for each other. */
export type FetchLike = (url: string, init: PlainInit) => Promise<HttpAnswer>;

/** How long a connection may have been idle and still carry the next request (older ones are closed then). */
export const IDLE_MS = 4000;

/** A connection, and what its events go to now: the request it carries, or the idle pool. */
class Conn {
  wire!: Wire;
  events: WireEvents = { data: () => this.drop(), closed: () => this.drop() };
  /** When it last went back to the pool (ms, `Date.now()`); 0 while it has carried no answer. */
  idleSince = 0;
  gone = false;
  constructor(readonly key: string) {}

  drop(): void {
    if (this.gone) return;
    this.gone = true;
    const list = idle.get(this.key);
    const at = list?.indexOf(this) ?? -1;
    if (at >= 0) list!.splice(at, 1);
    this.wire?.close();
  }
}

const idle = new Map<string, Conn[]>();

async function open(key: string, host: string, port: number): Promise<Conn> {
  const conn = new Conn(key);
  const ev: WireEvents = { data: (b) => conn.events.data(b), closed: (e) => conn.events.closed(e) };
  conn.wire = await connectWire(host, port, ev);
  return conn;
}

function release(conn: Conn, reusable: boolean): void {
  if (!reusable || conn.gone) return conn.drop();
  conn.events = { data: () => conn.drop(), closed: () => conn.drop() };
  conn.wire.unref();
  conn.idleSince = Date.now();
  const list = idle.get(conn.key) ?? [];
  list.push(conn);
  idle.set(conn.key, list);
}

/** The connection idle the shortest time, when that is under `IDLE_MS`; older ones are closed. */
function takeIdle(key: string): Conn | undefined {
  const list = idle.get(key);
  const conn = list?.pop();
  if (!conn) return undefined;
  if (Date.now() - conn.idleSince > IDLE_MS) {
    for (const old of [conn, ...list!]) old.drop(); // the rest went idle earlier still
    return undefined;
  }
  conn.wire.ref();
  return conn;
}

/** A reused connection closed before any answer: an idempotent request may be sent again on a new one. */
class StaleConnection extends Error {}

/** Methods whose request may go twice: a second try cannot do what the first did not. */
const IDEMPOTENT = new Set(["GET", "HEAD", "DELETE", "OPTIONS"]);

const transportError = (message: string, code: string): Error => Object.assign(new Error(message), { code });
const encoder = new TextEncoder();

let lastUrl: URL | undefined;

export const plainFetch: FetchLike = async (url, init) => {
  const u = lastUrl?.href === url ? lastUrl : (lastUrl = new URL(url));
  if (u.protocol !== "http:") throw new TypeError(`plainFetch speaks http:// only, not ${u.protocol}`);
  init.signal?.throwIfAborted();
  const length = init.body === undefined ? undefined : Buffer.byteLength(init.body);
  const bytes = encoder.encode(requestHead(init.method, u, init.headers ?? {}, length) + (init.body ?? ""));
  const host = u.hostname.startsWith("[") ? u.hostname.slice(1, -1) : u.hostname;
  const port = Number(u.port || 80);
  let stale: StaleConnection | undefined;
  for (;;) {
    try {
      const conn = (!stale && takeIdle(u.host)) ||
        await abortable(open(u.host, host, port), init.signal, (late) => late.drop());
      return await exchange(conn, bytes, init.method, init.signal);
    } catch (err) {
      if (err instanceof StaleConnection && !stale && IDEMPOTENT.has(init.method)) {
        stale = err; // send it once more, on a new connection
        continue;
      }
      // the request went out on the stale connection: whatever befell the second try, it may have run
      if (stale) throw transportError(stale.message, "ECONNRESET");
      if (err instanceof StaleConnection) throw transportError(err.message, "ECONNRESET");
      throw err;
    }
  }
};

/** Send `bytes` on `conn` and read its answer. */
function exchange(conn: Conn, bytes: Uint8Array, method: string, signal?: AbortSignal): Promise<HttpAnswer> {
  return new Promise<HttpAnswer>((resolve, reject) => {
    const parser = new ResponseParser(method);
    let head: ResponseHead | undefined;
    let stream: AnswerBody | undefined;
    let chunks: Uint8Array[] = [];
    let settled = false;
    const settle = () => {
      settled = true;
      signal?.removeEventListener("abort", onAbort);
    };
    const fail = (err: unknown) => {
      if (settled) return;
      settle();
      conn.drop();
      if (stream) stream.fail(err);
      else reject(err);
    };
    const onAbort = () => fail(signal!.reason);
    let framing: BodyFraming = "none";
    const answer = (h: ResponseHead, body: AnswerBody | null) =>
      resolve(new PlainAnswer(h.status, h.statusText, h.headers, framing === "none" ? null : body));
    const onEvents = (events: ParseEvent[]) => {
      for (const e of events) {
        if (e.kind === "head") {
          [head, framing] = [e.head, e.body];
          if (framing === "stream") {
            stream = new AnswerBody(() => void (settled || (settle(), conn.drop())));
            answer(head, stream);
          }
        } else if (e.kind === "data") {
          // the parser's bytes are its own copy, never written again
          if (stream) stream.push(e.bytes);
          else chunks.push(e.bytes);
        } else {
          settle();
          // an answer before the whole request went out (a 413 from the length alone): the rest
          // of the body would reach the service ahead of the next request
          release(conn, e.reusable && !conn.wire.pending());
          if (stream) stream.end();
          else {
            const body = new AnswerBody();
            for (const c of chunks) body.push(c);
            body.end();
            answer(head!, body);
          }
          chunks = [];
        }
      }
    };
    conn.events = {
      data: (b) => {
        if (settled) return;
        try {
          onEvents(parser.push(b));
        } catch (err) {
          fail(err);
        }
      },
      closed: (err) => {
        if (settled) return;
        if (!parser.started && conn.idleSince > 0) { // a kept connection
          return fail(new StaleConnection("the connection closed before an answer"));
        }
        try {
          onEvents(parser.eof());
        } catch (parseErr) {
          fail(transportError(err?.message ?? (parseErr as Error).message, "ECONNRESET"));
        }
      },
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    conn.wire.write(bytes);
  });
}

/** `p`, or the signal's reason as soon as it aborts (what `p` brings later is handed to `late`). */
function abortable<T>(p: Promise<T>, signal: AbortSignal | undefined, late: (v: T) => void): Promise<T> {
  if (!signal) return p;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    p.then((v) => {
      signal.removeEventListener("abort", onAbort);
      if (signal.aborted) late(v);
      else resolve(v);
    }, (err) => {
      signal.removeEventListener("abort", onAbort);
      reject(err);
    });
  });
}
