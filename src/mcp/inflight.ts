/**
 * Which requests a transport has received and not yet answered, tracked at the transport itself
 * (a request counts from the moment its bytes arrive until its response is written, each one
 * under an id the host reused too), so a session can finish what the host asked before it shuts
 * down.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js";

export interface InFlight {
  /** Resolves when nothing is in flight, or after `timeoutMs`. */
  idle(timeoutMs: number): Promise<void>;
}

/**
 * Call after `server.connect(transport)`: wraps the handlers the protocol installed. `onTraffic`
 * hears of every message either way (the idle timer's `touch`).
 */
export function trackInFlight(transport: Transport, onTraffic: () => void = () => {}): InFlight {
  // how many requests under each id: a host may reuse an id while a request with it is in flight
  // (serve refuses the second; its refusal must not count as the first's answer)
  const open = new Map<RequestId, number>();
  const waiters = new Set<() => void>();
  const onmessage = transport.onmessage;
  const settle = (id: RequestId) => {
    const n = open.get(id);
    if (n === undefined) return;
    if (n > 1) return void open.set(id, n - 1);
    open.delete(id);
    if (open.size === 0) { for (const w of waiters) w(); }
  };
  transport.onmessage = (message: JSONRPCMessage, extra?: unknown) => {
    onTraffic();
    if ("method" in message && "id" in message) open.set(message.id, (open.get(message.id) ?? 0) + 1);
    // a cancelled request gets no answer (the spec's rule): nothing is left to wait for
    if ("method" in message && message.method === "notifications/cancelled") {
      const id = (message.params as { requestId?: RequestId } | undefined)?.requestId;
      if (id !== undefined) settle(id);
    }
    (onmessage as (m: JSONRPCMessage, e?: unknown) => void)?.(message, extra);
  };
  const send = transport.send.bind(transport);
  transport.send = async (message, options) => {
    onTraffic();
    try {
      await send(message, options);
    } finally {
      if (!("method" in message) && "id" in message && message.id !== undefined) settle(message.id);
    }
  };
  return {
    idle: (timeoutMs) =>
      open.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, timeoutMs);
        waiters.add(done);
      }),
  };
}
