/**
 * HTTP/1.1 on the client side, as pure functions of bytes: the text of a request, and an
 * incremental parser of the response (RFC 9112: status line, header fields, then a body framed by
 * chunked transfer coding, by Content-Length, or by the connection's end; none for 1xx, 204, 304 and
 * HEAD). Bytes go in as they arrive, split anywhere; what they completed comes out as events. A
 * message that breaks the grammar throws an `Http1Error`; the connection is then unusable. The
 * socket, the pool and the `Response` are `plain_fetch.ts`'s.
 */
import { Buffer } from "node:buffer";

export interface ResponseHead {
  status: number;
  statusText: string;
  /** In order, names lower-cased, repeated fields kept. */
  headers: [string, string][];
}

/**
 * How the body after a head is framed: none at all (HEAD, 204, 304), by Content-Length (known
 * size, possibly 0), or a stream (chunked, or until the connection ends).
 */
export type BodyFraming = "none" | "length" | "stream";

export type ParseEvent =
  | { kind: "head"; head: ResponseHead; body: BodyFraming }
  | { kind: "data"; bytes: Uint8Array }
  /** The message is complete; `reusable`: the connection may carry another request. */
  | { kind: "end"; reusable: boolean };

/** The response broke HTTP/1.1 (or a limit of ours): the connection cannot be trusted further. */
export class Http1Error extends Error {
  readonly code = "HPE_INVALID";
  constructor(message: string) {
    super(message);
    this.name = "Http1Error";
  }
}

/** `HTTP/1.x NNN text`, taken apart without a regular expression (the relay runs without the JIT). */
function statusLine(line: string): { minor: string; code: number; text: string } {
  const code = Number(line.slice(9, 12));
  if (
    !line.startsWith("HTTP/1.") || (line[7] !== "0" && line[7] !== "1") || line[8] !== " " ||
    !(code >= 100 && code <= 999) || !(line.length === 12 || line[12] === " ")
  ) {
    throw new Http1Error(`not an HTTP/1.1 status line: '${line.slice(0, 40)}'`);
  }
  return { minor: line[7], code, text: line.slice(13) };
}

/** Longest status line plus header section accepted (what a service sends is a few hundred bytes). */
const MAX_HEAD = 64 * 1024;
const MAX_CHUNK_LINE = 4096;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const CRLF = Buffer.from("\r\n");
const HEAD_END = Buffer.from("\r\n\r\n");

/**
 * The head of a request with a body of `bodyBytes` bytes (none when undefined). Throws a TypeError
 * (as `fetch` does) for a header name that is not a token or a value with CR, LF or NUL in it, so
 * nothing a header carries can start a header or a request of its own.
 */
export function requestHead(
  method: string,
  url: URL,
  headers: Record<string, string>,
  bodyBytes: number | undefined,
): string {
  let head = `${method} ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n`;
  let values = "";
  for (const name in headers) {
    if (!validNames.has(name)) {
      if (!TOKEN.test(name)) throw new TypeError(`'${name}' is not a valid HTTP header name`);
      const lower = name.toLowerCase();
      if (lower === "host" || lower === "content-length" || lower === "transfer-encoding") continue;
      validNames.add(name);
    }
    const value = headers[name];
    values += value;
    head += `${name}: ${value}\r\n`;
  }
  if (/[\r\n\0]/.test(values)) throw new TypeError("an HTTP header value holds CR, LF or NUL");
  if (bodyBytes !== undefined) head += `content-length: ${bodyBytes}\r\n`;
  return head + "\r\n";
}

/** Header names already checked (a relay sends the same few on every request). */
const validNames = new Set<string>();

type State =
  | { at: "head" }
  | { at: "length"; left: number }
  | { at: "chunk-size" }
  | { at: "chunk-data"; left: number }
  | { at: "chunk-end" }
  | { at: "trailers" }
  | { at: "until-close" }
  | { at: "done" };

export class ResponseParser {
  #buf: Buffer = Buffer.alloc(0);
  #state: State = { at: "head" };
  #reusable = true;
  readonly #noBody: boolean;

  /** `method`: the request's (a HEAD answer has no body whatever its headers say). */
  constructor(method: string) {
    this.#noBody = method === "HEAD";
  }

  /** Has the parser seen the whole message? */
  get done(): boolean {
    return this.#state.at === "done";
  }

  /** Has anything of the response arrived yet? */
  get started(): boolean {
    return this.#buf.length > 0 || this.#state.at !== "head";
  }

  push(bytes: Uint8Array): ParseEvent[] {
    if (this.#state.at === "done") {
      if (bytes.length === 0) return [];
      throw new Http1Error("the service sent bytes after its answer");
    }
    this.#buf = this.#buf.length ? Buffer.concat([this.#buf, bytes]) : Buffer.from(bytes);
    const out: ParseEvent[] = [];
    while (this.#step(out));
    return out;
  }

  /** The connection ended: ends a body framed by it; throws when the message was incomplete. */
  eof(): ParseEvent[] {
    if (this.#state.at === "until-close") {
      this.#state = { at: "done" };
      return [{ kind: "end", reusable: false }];
    }
    if (this.#state.at === "done") return [];
    throw new Http1Error(
      this.#state.at === "head" ? "the connection closed before an answer" : "the answer was cut off",
    );
  }

  /** One step of progress on the buffer; false when it needs more bytes (or is done). */
  #step(out: ParseEvent[]): boolean {
    const s = this.#state;
    switch (s.at) {
      case "head":
        return this.#head(out);
      case "length": {
        if (!this.#buf.length) return false;
        const take = Math.min(s.left, this.#buf.length);
        out.push({ kind: "data", bytes: this.#take(take) });
        s.left -= take;
        if (s.left === 0) this.#finish(out);
        return false; // done, or the buffer is empty
      }
      case "chunk-size": {
        const line = this.#line(MAX_CHUNK_LINE);
        if (line === undefined) return false;
        const hex = line.split(";")[0].trim();
        if (!/^[0-9a-fA-F]{1,8}$/.test(hex)) throw new Http1Error(`bad chunk size '${hex.slice(0, 20)}'`);
        const size = parseInt(hex, 16);
        this.#state = size === 0 ? { at: "trailers" } : { at: "chunk-data", left: size };
        return true;
      }
      case "chunk-data": {
        if (!this.#buf.length) return false;
        const take = Math.min(s.left, this.#buf.length);
        out.push({ kind: "data", bytes: this.#take(take) });
        s.left -= take;
        if (s.left === 0) this.#state = { at: "chunk-end" };
        return true;
      }
      case "chunk-end": {
        if (this.#buf.length < 2) return false;
        if (this.#buf[0] !== 13 || this.#buf[1] !== 10) throw new Http1Error("a chunk did not end in CRLF");
        this.#take(2);
        this.#state = { at: "chunk-size" };
        return true;
      }
      case "trailers": {
        const line = this.#line(MAX_HEAD);
        if (line === undefined) return false;
        if (line === "") this.#finish(out);
        return line !== "";
      }
      case "until-close":
        if (this.#buf.length) out.push({ kind: "data", bytes: this.#take(this.#buf.length) });
        return false;
      case "done":
        return false;
    }
  }

  #head(out: ParseEvent[]): boolean {
    const end = this.#buf.indexOf(HEAD_END);
    if (end < 0) {
      if (this.#buf.length > MAX_HEAD) throw new Http1Error("the answer's header section is too long");
      return false;
    }
    const lines = this.#take(end + 4).subarray(0, end).toString("latin1").split("\r\n");
    const status = statusLine(lines[0]);
    const headers: [string, string][] = [];
    let coding = "", connection = "", length: string | undefined;
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i];
      const colon = line.indexOf(":");
      const name = colon > 0 ? line.slice(0, colon).toLowerCase() : "";
      if (!TOKEN.test(name)) throw new Http1Error(`bad header line '${line.slice(0, 40)}'`);
      const value = line.slice(colon + 1).trim();
      headers.push([name, value]);
      if (name === "transfer-encoding") coding += `,${value.toLowerCase()}`;
      else if (name === "connection") connection += `,${value.toLowerCase()}`;
      else if (name === "content-length") {
        if (length !== undefined && length !== value) throw new Http1Error("conflicting content-length");
        length = value;
      }
    }
    if (status.code < 200) return true; // an interim answer (100 Continue, 103): the real one follows
    this.#reusable = status.minor === "1" ? !/\bclose\b/.test(connection) : /\bkeep-alive\b/.test(connection);
    let body: BodyFraming;
    let next: State;
    if (this.#noBody || status.code === 204 || status.code === 304) [body, next] = ["none", { at: "done" }];
    else if (coding) {
      body = "stream";
      next = /chunked\s*$/.test(coding) ? { at: "chunk-size" } : { at: "until-close" };
    } else if (length !== undefined) {
      if (!/^\d{1,15}$/.test(length)) throw new Http1Error(`bad content-length '${length.slice(0, 40)}'`);
      const left = Number(length);
      [body, next] = ["length", left === 0 ? { at: "done" } : { at: "length", left }];
    } else [body, next] = ["stream", { at: "until-close" }];
    if (next.at === "until-close") this.#reusable = false;
    out.push({ kind: "head", head: { status: status.code, statusText: status.text, headers }, body });
    if (next.at === "done") this.#finish(out);
    else this.#state = next;
    return next.at !== "done";
  }

  #finish(out: ParseEvent[]): void {
    this.#state = { at: "done" };
    // bytes past the answer: we never pipeline, so the connection is out of step
    out.push({ kind: "end", reusable: this.#reusable && this.#buf.length === 0 });
  }

  /** A CRLF-terminated line, taken off the buffer; undefined until it is complete. */
  #line(max: number): string | undefined {
    const end = this.#buf.indexOf(CRLF);
    if (end < 0) {
      if (this.#buf.length > max) throw new Http1Error("a line of the answer is too long");
      return undefined;
    }
    return this.#take(end + 2).subarray(0, end).toString("latin1");
  }

  #take(n: number): Buffer {
    const head = this.#buf.subarray(0, n);
    this.#buf = this.#buf.subarray(n);
    return head;
  }
}
