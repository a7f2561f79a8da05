/**
 * `tools/call` to an upstream, past the SDK's Protocol. The one hot request is sent and its answer
 * (and its progress) taken off the link's transport before the SDK's dispatch sees them, which
 * asks zod of every message what it is, and of every answer again, before parsing the result:
 * with the host side (`host_fast_calls.ts`), a fifth of a serve's CPU per call, profiled. What
 * `Client.callTool` does is done the same way: the id from the client's own counter (the server
 * sees the ids it saw before), the progress token, the timeout (reset on progress, bounded by
 * `maxTotalTimeout`), the cancellation sent on abort or timeout and the same errors, a result
 * held to `CallToolResultSchema` (by hand where it certainly fits, else by the schema), every
 * open call failed with "Connection closed" when the transport closes. A tool the client must
 * treat otherwise (an output schema to check its result against, task-based execution), or a
 * client without the counter, goes through `Client.callTool` as before.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { safeParse } from "@modelcontextprotocol/sdk/server/zod-compat.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolResultSchema,
  ErrorCode,
  type JSONRPCMessage,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { callToolResultCertain } from "./jsonrpc_shape.ts";

/** The SDK's default request timeout (`DEFAULT_REQUEST_TIMEOUT_MSEC`). */
const DEFAULT_TIMEOUT_MS = 60_000;

export interface FastCallOptions {
  signal?: AbortSignal;
  timeout?: number;
  resetTimeoutOnProgress?: boolean;
  maxTotalTimeout?: number;
  onprogress?: (p: { progress: number; total?: number; message?: string }) => void;
}

/** The parts of the SDK's Client (private in its types) the fast path reads; checked at run time. */
interface ClientInternals {
  _requestMessageId?: unknown;
  isToolTaskRequired?: (name: string) => boolean;
  getToolOutputValidator?: (name: string) => unknown;
}

interface Pending {
  resolve(result: unknown): void;
  reject(err: unknown): void;
  onprogress?: FastCallOptions["onprogress"];
  timer?: ReturnType<typeof setTimeout>;
  timeout: number;
  start: number;
  maxTotal?: number;
  resetOnProgress: boolean;
  onTimeout(): void;
  signal?: AbortSignal;
}

/** Progress params as the SDK's schema takes them (a number, optional total and message). */
function progressOk(p: Record<string, unknown>): boolean {
  return typeof p.progress === "number" && (p.total === undefined || typeof p.total === "number") &&
    (p.message === undefined || typeof p.message === "string");
}

export class UpstreamFastCalls {
  readonly #client: Client;
  readonly #transport: Transport;
  readonly #pending = new Map<number, Pending>();
  #closed = false;

  /** Call after `client.connect(transport)`: wraps the handlers the SDK installed. */
  constructor(client: Client, transport: Transport) {
    this.#client = client;
    this.#transport = transport;
    const onclose = transport.onclose;
    transport.onclose = () => {
      onclose?.();
      this.#onclose();
    };
  }

  /** Can `name` take the fast path on this client? */
  usable(name: string): boolean {
    const c = this.#client as unknown as ClientInternals;
    return !this.#closed && typeof c._requestMessageId === "number" &&
      typeof c.isToolTaskRequired === "function" && typeof c.getToolOutputValidator === "function" &&
      !c.isToolTaskRequired.call(this.#client, name) && !c.getToolOutputValidator.call(this.#client, name);
  }

  /**
   * Offer an incoming message: true when it was one of these calls' answers or progress (handled
   * here, in the order the SDK handles them: progress a microtask after it arrives, the answer
   * after that), false for the SDK's dispatch.
   */
  take(m: JSONRPCMessage): boolean {
    if ("method" in m) {
      if (m.method !== "notifications/progress" || "id" in m) return false;
      const { progressToken, ...rest } = (m.params ?? {}) as Record<string, unknown>;
      // the SDK looks a token up as a number ("5" is call 5), once its schema took it as an id
      if (typeof progressToken !== "string" && !Number.isSafeInteger(progressToken)) return false;
      const p = this.#pending.get(Number(progressToken));
      if (!p?.onprogress) return false;
      if (progressOk(rest)) void Promise.resolve().then(() => this.#progress(Number(progressToken), rest));
      return true;
    }
    if (!("id" in m)) return false;
    const id = Number(m.id); // as the SDK matches an answer
    if (!this.#pending.has(id)) return false;
    queueMicrotask(() => this.#answer(id, m));
    return true;
  }

  /** `tools/call` as `Client.callTool` makes it, for a tool `usable` said yes to. */
  call(
    params: { name: string; arguments?: Record<string, unknown> },
    opts: FastCallOptions,
  ): Promise<unknown> {
    return new Promise((resolve, reject) => {
      opts.signal?.throwIfAborted();
      const c = this.#client as unknown as { _requestMessageId: number };
      const id = c._requestMessageId++;
      const request: JSONRPCMessage = {
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: opts.onprogress ? { ...params, _meta: { progressToken: id } } : params,
      };
      const cancel = (reason: unknown) => {
        this.#forget(id);
        this.#transport.send({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: id, reason: String(reason) },
        }).catch((err) => this.#transport.onerror?.(new Error(`Failed to send cancellation: ${err}`)));
        reject(reason instanceof McpError ? reason : new McpError(ErrorCode.RequestTimeout, String(reason)));
      };
      const timeout = opts.timeout ?? DEFAULT_TIMEOUT_MS;
      const pending: Pending = {
        resolve,
        reject,
        onprogress: opts.onprogress,
        timeout,
        start: Date.now(),
        maxTotal: opts.maxTotalTimeout,
        resetOnProgress: opts.resetTimeoutOnProgress ?? false,
        onTimeout: () =>
          cancel(McpError.fromError(ErrorCode.RequestTimeout, "Request timed out", { timeout })),
        signal: opts.signal,
      };
      this.#pending.set(id, pending);
      opts.signal?.addEventListener("abort", () => cancel(opts.signal?.reason));
      pending.timer = setTimeout(pending.onTimeout, timeout);
      this.#transport.send(request).catch((err) => {
        clearTimeout(pending.timer);
        reject(err);
      });
    });
  }

  #forget(id: number): Pending | undefined {
    const p = this.#pending.get(id);
    if (!p) return undefined;
    clearTimeout(p.timer);
    this.#pending.delete(id);
    return p;
  }

  #progress(id: number, params: Record<string, unknown>): void {
    const p = this.#pending.get(id);
    if (!p?.onprogress) return;
    if (p.resetOnProgress) {
      const elapsed = Date.now() - p.start;
      if (p.maxTotal && elapsed >= p.maxTotal) {
        this.#forget(id);
        p.reject(
          McpError.fromError(ErrorCode.RequestTimeout, "Maximum total timeout exceeded", {
            maxTotalTimeout: p.maxTotal,
            totalElapsed: elapsed,
          }),
        );
        return;
      }
      clearTimeout(p.timer);
      p.timer = setTimeout(p.onTimeout, p.timeout);
    }
    p.onprogress(params as { progress: number; total?: number; message?: string });
  }

  #answer(id: number, m: JSONRPCMessage): void {
    const p = this.#forget(id);
    if (!p || p.signal?.aborted) return;
    if ("error" in m) {
      p.reject(McpError.fromError(m.error.code, m.error.message, m.error.data));
      return;
    }
    const result = (m as { result: unknown }).result;
    if (callToolResultCertain(result)) return p.resolve(result);
    const parsed = safeParse(CallToolResultSchema, result); // the SDK's own call: the same error
    if (parsed.success) p.resolve(parsed.data);
    else p.reject(parsed.error);
  }

  #onclose(): void {
    this.#closed = true;
    const error = McpError.fromError(ErrorCode.ConnectionClosed, "Connection closed");
    for (const id of [...this.#pending.keys()]) this.#forget(id)?.reject(error);
  }
}
