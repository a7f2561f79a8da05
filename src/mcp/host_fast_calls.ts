/**
 * `tools/call` from a host, past the SDK's Protocol. The one hot request is taken off the host
 * transport before the SDK's dispatch sees it (which asks zod of every message whether it is a
 * response, an error or a request, each a full parse whose failure builds an error, then parses
 * the request twice and the result once: with the upstream side, a fifth of a serve's CPU per
 * call, profiled) and answered as the SDK's Server answers it: the handler's result held to
 * `CallToolResultSchema` (by hand where it certainly fits, `callToolResultCertain`, else by the
 * schema, whose refusal is the SDK's `Invalid tools/call result: …`), a thrown error as the SDK
 * words it, no answer to a request the host cancelled, progress on the request's own stream, and
 * every open call aborted when the transport closes. A call the hand check does not vouch for
 * (params it cannot be sure of, a task-augmented call) goes to the SDK as before.
 */
import { safeParse } from "@modelcontextprotocol/sdk/server/zod-compat.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolResultSchema,
  ErrorCode,
  type JSONRPCMessage,
  McpError,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import { callToolParamsValid, callToolResultCertain } from "./jsonrpc_shape.ts";

/** What a `tools/call` handler gets besides the request: as the SDK's `RequestHandlerExtra` has it. */
export interface CallExtra {
  requestId: RequestId;
  signal: AbortSignal;
  sendNotification(n: { method: string; params?: Record<string, unknown> }): Promise<void>;
}

export type CallHandler = (
  req: {
    method: "tools/call";
    params: { name: string; arguments?: Record<string, unknown>; _meta?: object };
  },
  extra: CallExtra,
) => Promise<unknown>;

export interface FastCalls {
  /** Take `message` if it is a `tools/call` this answers (true), else leave it to the SDK (false). */
  take(message: JSONRPCMessage): boolean;
  /** A `notifications/cancelled` from the host: abort the call it names, if it is one of these. */
  cancelled(message: JSONRPCMessage): void;
  /** The transport closed: abort every open call (their answers are not sent). */
  closed(): void;
}

/** Is `message` a `tools/call` request whose params the hand check vouches for (and no task)? */
function fastCall(message: JSONRPCMessage): message is JSONRPCMessage & {
  id: RequestId;
  method: "tools/call";
  params: { name: string; arguments?: Record<string, unknown> };
} {
  if (!("method" in message) || message.method !== "tools/call" || !("id" in message)) return false;
  const p = message.params as Record<string, unknown> | undefined;
  if (!callToolParamsValid(p) || p!.task !== undefined) return false;
  // zod's record makes a copy, in which an own `__proto__` key would not survive
  const args = p!.arguments as object | undefined;
  return args === undefined || !Object.hasOwn(args, "__proto__");
}

/** The result as the SDK's Server sends it: checked, and the schema's own value where it is not certain. */
function checkedResult(result: unknown): unknown {
  if (callToolResultCertain(result)) return result;
  const r = safeParse(CallToolResultSchema, result); // the SDK Server's own call
  if (!r.success) {
    const why = r.error instanceof Error ? r.error.message : String(r.error);
    throw new McpError(ErrorCode.InvalidParams, `Invalid tools/call result: ${why}`);
  }
  return r.data;
}

/** The error answer the SDK's Protocol makes of a thrown value. */
function errorOf(err: unknown): { code: number; message: string; data?: unknown } {
  const e = err as { code?: unknown; message?: unknown; data?: unknown };
  return {
    code: Number.isSafeInteger(e?.code) ? e.code as number : ErrorCode.InternalError,
    message: (e?.message as string | undefined) ?? "Internal error",
    ...(e?.data !== undefined && { data: e.data }),
  };
}

export function fastCalls(transport: Transport, handler: CallHandler): FastCalls {
  const open = new Map<RequestId, AbortController>();
  const send = (m: JSONRPCMessage, opts?: { relatedRequestId?: RequestId }) => transport.send(m, opts);
  return {
    take: (message) => {
      if (!fastCall(message)) return false;
      const id = message.id;
      if (open.has(id)) {
        // a second request under an id still in flight: the first would be orphaned (its cancel and
        // its answer now the second's), so the second is refused
        void send({
          jsonrpc: "2.0",
          id,
          error: {
            code: ErrorCode.InvalidRequest,
            message: `Invalid request: id ${JSON.stringify(id)} is in use by a call in flight`,
          },
        }).catch((err) => transport.onerror?.(new Error(`Failed to send response: ${err}`)));
        return true;
      }
      const controller = new AbortController();
      open.set(id, controller);
      const extra: CallExtra = {
        requestId: id,
        signal: controller.signal,
        sendNotification: async (n) => {
          if (controller.signal.aborted) return;
          await send({ jsonrpc: "2.0", ...n } as JSONRPCMessage, { relatedRequestId: id });
        },
      };
      // a tick later, as the SDK starts its handlers
      Promise.resolve()
        .then(() => handler({ method: "tools/call", params: message.params }, extra))
        .then(
          (result) => {
            if (controller.signal.aborted) return;
            let answer: JSONRPCMessage;
            try {
              answer = { jsonrpc: "2.0", id, result: checkedResult(result) } as JSONRPCMessage;
            } catch (err) {
              answer = { jsonrpc: "2.0", id, error: errorOf(err) };
            }
            return send(answer);
          },
          (err) => {
            if (controller.signal.aborted) return;
            return send({ jsonrpc: "2.0", id, error: errorOf(err) });
          },
        )
        .catch((err) => transport.onerror?.(new Error(`Failed to send response: ${err}`)))
        .finally(() => {
          if (open.get(id) === controller) open.delete(id);
        });
      return true;
    },
    cancelled: (message) => {
      if (!("method" in message) || message.method !== "notifications/cancelled") return;
      const p = message.params as { requestId?: unknown; reason?: unknown } | undefined;
      // no id cancels nothing (the SDK's rule, except that 0 is an id: the SDK skips it); a reason
      // must be a string
      const id = p?.requestId;
      if (id === undefined || id === null || (p!.reason !== undefined && typeof p!.reason !== "string")) {
        return;
      }
      open.get(id as RequestId)?.abort(p!.reason);
    },
    closed: () => {
      for (const c of open.values()) c.abort();
      open.clear();
    },
  };
}
