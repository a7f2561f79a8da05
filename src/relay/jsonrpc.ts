/**
 * JSON-RPC 2.0 as the relay needs it: each message parsed once to learn its kind, id and method
 * (the relay keeps the text it was given and forwards that, never re-serializing what it only
 * passes through), invalid input answered as JSON-RPC says (-32700 for a line that is not JSON,
 * -32600 for one that is not a message), the message an SSE event carries read the same way, and
 * error answers built in one place. The codes equal the MCP SDK's `ErrorCode` (a unit test holds
 * them to it); only types come from the SDK.
 */
import type { JSONRPCRequest, RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { SseEvent } from "./sse.ts";

export const RpcCode = {
  ConnectionClosed: -32000,
  ParseError: -32700,
  InvalidRequest: -32600,
  InternalError: -32603,
} as const;

export type Message =
  | { kind: "request"; id: RequestId; method: string; req: JSONRPCRequest; text: string }
  | { kind: "notification"; method: string; text: string }
  | { kind: "response"; id: RequestId; text: string; result?: Record<string, unknown> }
  | { kind: "invalid"; id: RequestId | null; code: number; message: string };

const isId = (v: unknown): v is RequestId =>
  typeof v === "string" || (typeof v === "number" && Number.isFinite(v));

/** Classify one message; `text` is what is forwarded (a single line). */
export function parseMessage(text: string): Message {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return {
      kind: "invalid",
      id: null,
      code: RpcCode.ParseError,
      message: "Parse error: the line is not JSON",
    };
  }
  return classify(v, text);
}

/** Classify an already parsed value (from a service); `text` re-serialized only when it must be. */
export function classify(v: unknown, text?: string): Message {
  if (v === null || typeof v !== "object" || Array.isArray(v)) {
    return {
      kind: "invalid",
      id: null,
      code: RpcCode.InvalidRequest,
      message: Array.isArray(v)
        ? "Invalid Request: JSON-RPC batches are not supported; send one message per line"
        : "Invalid Request: a message is a JSON object",
    };
  }
  const m = v as Record<string, unknown>;
  const id = isId(m.id) ? m.id : null;
  if (m.jsonrpc !== "2.0") {
    return {
      kind: "invalid",
      id,
      code: RpcCode.InvalidRequest,
      message: 'Invalid Request: "jsonrpc" must be "2.0"',
    };
  }
  const line = text === undefined || text.includes("\n") || text.includes("\r") ? JSON.stringify(v) : text;
  if (typeof m.method === "string") {
    if (id !== null) return { kind: "request", id, method: m.method, req: v as JSONRPCRequest, text: line };
    if (m.id === undefined) return { kind: "notification", method: m.method, text: line };
  } else if (id !== null && ("result" in m || "error" in m)) {
    const result = m.result !== null && typeof m.result === "object"
      ? m.result as Record<string, unknown>
      : undefined;
    return { kind: "response", id, text: line, result };
  }
  return {
    kind: "invalid",
    id,
    code: RpcCode.InvalidRequest,
    message: "Invalid Request: not a request, notification or response",
  };
}

/** The message an SSE event carries: a `message` event's JSON data (anything else carries none). */
export function messageIn(e: SseEvent): Message | undefined {
  if (!e.hasData || e.event !== "message") return undefined;
  let v: unknown;
  try {
    v = JSON.parse(e.data);
  } catch {
    return undefined; // not a JSON-RPC message: nothing anyone could answer
  }
  return classify(v, e.data);
}

/** An error answer, as a line. */
export function errorLine(id: RequestId | null, code: number, message: string): string {
  return JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } });
}

export function resultLine(id: RequestId, result: unknown): string {
  return JSON.stringify({ jsonrpc: "2.0", id, result });
}

/** The id a skipped (oversize) line carried, read from its first characters; null when none shows. */
export function idInHead(head: string): RequestId | null {
  const m = /"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,20})/.exec(head);
  if (!m) return null;
  try {
    return JSON.parse(m[1]) as RequestId;
  } catch {
    return null;
  }
}

/** The request a `notifications/cancelled` names (its text parsed again: it is rare). */
export function cancelledId(text: string): RequestId {
  const id = (JSON.parse(text) as { params?: { requestId?: unknown } }).params?.requestId;
  return typeof id === "string" || typeof id === "number" ? id : "";
}
