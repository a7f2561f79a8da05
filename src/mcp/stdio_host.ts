/**
 * The host's side of `hermit serve` over stdio (the session server and the relay): one JSON-RPC
 * message per line on stdin and stdout, read with bounds (json_lines.ts). Every line gets its due
 * under JSON-RPC 2.0 and `serve` goes on: a line that is not JSON is answered `-32700` (parse
 * error, `id: null`); JSON that is not a request is answered `-32600` (invalid request, with its
 * id when it has a usable one, else `null`); a request over `MAX_HOST_MESSAGE_BYTES` gets an
 * error answer for its own id; each is logged in one line. Replaces the SDK's
 * StdioServerTransport, which answered none of these and closed on an oversize line.
 */
import process from "node:process";
import type { Readable, Writable } from "node:stream";
import { serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, type JSONRPCMessage, type RequestId } from "@modelcontextprotocol/sdk/types.js";
import { log } from "../log.ts";
import { describeBytes, MiB } from "../platform/read_capped.ts";
import { JsonLineReader, type LineEvent } from "./json_lines.ts";

/** The largest message a host may send on stdin (the SDK's own limit, now per message). */
export const MAX_HOST_MESSAGE_BYTES = 10 * MiB;

export class HostStdioTransport implements Transport {
  readonly #stdin: Readable;
  readonly #stdout: Writable;
  readonly #read: JsonLineReader;
  /** Ids of hermit's own requests to the host still unanswered: an oversize line with one is their answer. */
  readonly #asked = new Set<RequestId>();
  #started = false;

  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  constructor(
    stdin: Readable = process.stdin,
    stdout: Writable = process.stdout,
    maxBytes = MAX_HOST_MESSAGE_BYTES,
  ) {
    this.#stdin = stdin;
    this.#stdout = stdout;
    this.#read = new JsonLineReader(maxBytes);
  }

  readonly #ondata = (chunk: Buffer | string) => {
    for (const e of this.#read.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk)) {
      this.#received(e);
    }
  };
  readonly #onerror = (err: Error) => this.onerror?.(err);
  /** A last line without a newline is a message like any other (a host may end stdin right after it). */
  readonly #onend = () => {
    for (const e of this.#read.flush()) this.#received(e);
  };

  start(): Promise<void> {
    if (this.#started) throw new Error("HostStdioTransport already started");
    this.#started = true;
    this.#stdin.on("data", this.#ondata);
    this.#stdin.on("error", this.#onerror);
    this.#stdin.on("end", this.#onend);
    return Promise.resolve();
  }

  #received(e: LineEvent): void {
    switch (e.kind) {
      case "message":
        if (!("method" in e.message) && e.message.id !== undefined) this.#asked.delete(e.message.id);
        return this.onmessage?.(e.message);
      case "unparsable":
        log.warn(`the host sent a line that is not JSON (${e.detail}); answered with a parse error`);
        return this.#answer(null, ErrorCode.ParseError, `Parse error: not JSON (${e.detail})`);
      case "invalid":
        if (e.isResponse) return log.warn(`the host sent an invalid response (${e.detail}); ignored`);
        log.warn(`the host sent an invalid request (${e.detail}); answered with an error`);
        return this.#answer(e.id, ErrorCode.InvalidRequest, `Invalid request: ${e.detail}`);
      case "oversize":
        return this.#oversize(e);
    }
  }

  #oversize(e: Extract<LineEvent, { kind: "oversize" }>): void {
    const what = `${describeBytes(e.bytes)}, over hermit's limit of ${
      describeBytes(this.#read.maxBytes)
    } per message`;
    log.warn(`the host sent a message of ${what}${e.method ? ` (${e.method})` : ""}; not read`);
    if (e.id !== null && e.method === undefined && this.#asked.delete(e.id)) {
      // the answer to one of hermit's own requests (sampling, elicitation): that request fails
      return this.onmessage?.({
        jsonrpc: "2.0",
        id: e.id,
        error: { code: ErrorCode.InternalError, message: `the host answered with ${what}` },
      });
    }
    if (e.id === null && e.method !== undefined) return; // a notification: nothing to answer
    const request = e.method === undefined ? "the request" : `the ${e.method} request`;
    this.#answer(
      e.id,
      ErrorCode.InvalidRequest,
      `${request} is ${what}; send less (a path or a reference instead of the content)`,
    );
  }

  #answer(id: RequestId | null, code: number, message: string): void {
    // JSON-RPC 2.0 answers what it cannot identify with id null; MCP's types insist on an id
    const response = { jsonrpc: "2.0", id, error: { code, message } } as unknown as JSONRPCMessage;
    this.send(response).catch((err) => this.onerror?.(err as Error));
  }

  send(message: JSONRPCMessage): Promise<void> {
    if ("method" in message && "id" in message) this.#asked.add(message.id);
    return new Promise((resolve) => {
      const out = this.#stdout;
      // A write that fails (EPIPE: the host is gone) never drains; its callback settles it, so an
      // answer nobody can read does not hold serve's drain at exit for its whole bound.
      const failed = (err?: Error | null) => {
        if (!err) return;
        out.off("drain", resolve);
        resolve();
        this.#outputGone(err);
      };
      if (out.write(serializeMessage(message), failed)) resolve();
      else out.once("drain", resolve);
    });
  }

  #gone = false;
  /**
   * The host closed its end of stdout (EPIPE) while it may keep stdin open: nothing hermit says can
   * reach it any more, so the session ends (once) rather than run calls whose answers are lost.
   */
  #outputGone(err: Error): void {
    const code = (err as NodeJS.ErrnoException).code;
    if (this.#gone || (code !== "EPIPE" && code !== "ERR_STREAM_DESTROYED")) return;
    this.#gone = true;
    log.warn(`the host closed hermit's stdout (${code}): the session ends`);
    void this.close();
  }

  close(): Promise<void> {
    this.#stdin.off("data", this.#ondata);
    this.#stdin.off("error", this.#onerror);
    this.#stdin.off("end", this.#onend);
    if (this.#stdin.listenerCount("data") === 0) this.#stdin.pause();
    this.#read.clear();
    this.onclose?.();
    return Promise.resolve();
  }
}
