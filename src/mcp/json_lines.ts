/**
 * Newline-delimited JSON-RPC, as MCP's stdio transport frames it, read with a bound: each line is
 * gathered once (no re-joining per chunk), a line past `maxBytes` is skipped to its end keeping
 * only its head and tail (so the request or response it belonged to can still be named and
 * answered), and every line becomes one event: a message, a line that is not JSON, JSON that is
 * not a JSON-RPC 2.0 message, or an oversize message. Nothing here closes a connection: one bad
 * line is one bad message. Pure over the bytes it is given.
 */
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js";
import { asJsonRpcMessage } from "./jsonrpc_shape.ts";

export type LineEvent =
  | { kind: "message"; message: JSONRPCMessage }
  /** Not JSON at all. */
  | { kind: "unparsable"; detail: string }
  /** JSON, but not a JSON-RPC 2.0 message; `id` when it carries a usable one. */
  | { kind: "invalid"; id: RequestId | null; isResponse: boolean; detail: string }
  /** Over the limit; `id` and `method` when the head or tail of the line shows them. */
  | { kind: "oversize"; bytes: number; id: RequestId | null; method?: string };

/** How much of an oversize line is kept to find its id and method. */
const KEEP = 4096;
const ID = String.raw`(-?\d+(?:\.\d+)?|"(?:[^"\\]|\\.)*")`;
/** A short string-valued key at the top that may stand beside the id: `"jsonrpc"` or `"method"`. */
const ID_SIBLING = String.raw`"(?:jsonrpc|method)"\s*:\s*"[^"]{0,200}"`;
/** The id among the first top-level keys (Python and most SDKs put it there). */
const HEAD_ID = new RegExp(String.raw`^\s*\{(?:\s*${ID_SIBLING}\s*,)*\s*"id"\s*:\s*${ID}`);
/** The id among the last top-level keys (the TypeScript SDK's order), never a nested one. */
const TAIL_ID = new RegExp(String.raw`[,{]\s*"id"\s*:\s*${ID}\s*(?:,\s*${ID_SIBLING}\s*)*\}\s*$`);
/** A key before or after `method` at the top: `"jsonrpc": "2.0"` or `"id": …`. */
const SIBLING = String.raw`"(?:jsonrpc|id)"\s*:\s*(?:"(?:[^"\\]|\\.)*"|-?\d+)`;
const HEAD_METHOD = new RegExp(String.raw`^\s*\{(?:\s*${SIBLING}\s*,)*\s*"method"\s*:\s*"([^"]{1,200})"`);
const TAIL_METHOD = new RegExp(String.raw`"method"\s*:\s*"([^"]{1,200})"\s*(?:,\s*${SIBLING}\s*)*\}\s*$`);

function parseId(raw: string | undefined): RequestId | null {
  if (raw === undefined) return null;
  try {
    const v = JSON.parse(raw);
    return typeof v === "string" || (typeof v === "number" && Number.isSafeInteger(v)) ? v : null;
  } catch {
    return null;
  }
}

/** The id and method an oversize line shows at its start or its end, if any. */
export function idOfTruncated(head: string, tail: string): { id: RequestId | null; method?: string } {
  const id = parseId(HEAD_ID.exec(head)?.[1] ?? TAIL_ID.exec(tail)?.[1]);
  const method = HEAD_METHOD.exec(head)?.[1] ?? TAIL_METHOD.exec(tail)?.[1];
  return method === undefined ? { id } : { id, method };
}

/** One line of text as an event (blank lines are none). */
export function classifyLine(line: string): LineEvent | undefined {
  if (!line.trim()) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    return { kind: "unparsable", detail: (err as Error).message };
  }
  const message = asJsonRpcMessage(value);
  if (message) return { kind: "message", message };
  const obj = value && typeof value === "object" && !Array.isArray(value)
    ? value as Record<string, unknown>
    : {};
  // beyond 2^53 JSON.parse has rounded it: an answer with it would name another request
  const id = typeof obj.id === "string" || (typeof obj.id === "number" && Number.isSafeInteger(obj.id))
    ? obj.id
    : null;
  return {
    kind: "invalid",
    id,
    isResponse: !("method" in obj) && ("result" in obj || "error" in obj),
    detail: describeInvalid(value),
  };
}

function describeInvalid(value: unknown): string {
  if (Array.isArray(value)) {
    return value.length ? "batches are not supported (MCP removed them)" : "an empty array is not a request";
  }
  if (value === null || typeof value !== "object") {
    return `a JSON ${value === null ? "null" : typeof value} is not a request`;
  }
  const o = value as Record<string, unknown>;
  if (o.jsonrpc !== "2.0") return `"jsonrpc" must be "2.0", not ${JSON.stringify(o.jsonrpc) ?? "missing"}`;
  if ("method" in o && typeof o.method !== "string") return `"method" must be a string`;
  if ("id" in o && typeof o.id !== "string" && typeof o.id !== "number") {
    return `"id" must be a string or a number`;
  }
  if (!("method" in o) && !("result" in o) && !("error" in o)) {
    return "neither a request, a notification nor a response";
  }
  return "not a valid JSON-RPC 2.0 message";
}

export class JsonLineReader {
  readonly maxBytes: number;
  #chunks: Buffer[] = [];
  #length = 0;
  /** While skipping an oversize line: its size so far, its head and its latest tail. */
  #skip: { bytes: number; head: Buffer; tail: Buffer } | undefined;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  /** Feed bytes; returns one event per line completed by them. */
  push(chunk: Buffer): LineEvent[] {
    const events: LineEvent[] = [];
    let start = 0;
    while (start <= chunk.length) {
      const nl = chunk.indexOf(10, start);
      this.#take(chunk.subarray(start, nl < 0 ? chunk.length : nl));
      if (nl < 0) break;
      const e = this.#endLine();
      if (e) events.push(e);
      start = nl + 1;
    }
    return events;
  }

  /** Bytes held for the line not finished yet (at most `maxBytes`, or the kept head and tail). */
  get buffered(): number {
    return this.#skip ? this.#skip.head.length + this.#skip.tail.length : this.#length;
  }

  /** The line the input ended in without a newline, as an event (none when nothing is held). */
  flush(): LineEvent[] {
    if (!this.#skip && this.#length === 0) return [];
    const e = this.#endLine();
    return e ? [e] : [];
  }

  clear(): void {
    this.#chunks = [];
    this.#length = 0;
    this.#skip = undefined;
  }

  #take(part: Buffer): void {
    if (!part.length) return;
    const skip = this.#skip;
    if (skip) {
      skip.bytes += part.length;
      skip.tail = part.length >= KEEP
        ? Buffer.from(part.subarray(part.length - KEEP))
        : Buffer.concat([skip.tail, part]).subarray(-KEEP);
      return;
    }
    this.#chunks.push(part);
    this.#length += part.length;
    if (this.#length > this.maxBytes) {
      const all = Buffer.concat(this.#chunks, this.#length);
      this.#skip = {
        bytes: this.#length,
        head: Buffer.from(all.subarray(0, KEEP)),
        tail: Buffer.from(all.subarray(-KEEP)),
      };
      this.#chunks = [];
      this.#length = 0;
    }
  }

  #endLine(): LineEvent | undefined {
    const skip = this.#skip;
    if (skip) {
      this.#skip = undefined;
      return {
        kind: "oversize",
        bytes: skip.bytes,
        ...idOfTruncated(skip.head.toString(), skip.tail.toString()),
      };
    }
    const line = Buffer.concat(this.#chunks, this.#length).toString("utf8").replace(/\r$/, "");
    this.#chunks = [];
    this.#length = 0;
    return classifyLine(line);
  }
}
