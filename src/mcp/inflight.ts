/**
 * Which requests a transport has received and not yet answered, tracked at the transport itself
 * (a request counts from the moment its bytes arrive until its response is written), so a
 * session can finish what the host asked before it shuts down.
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
  const open = new Set<RequestId>();
  const waiters = new Set<() => void>();
  const onmessage = transport.onmessage;
  const settle = (id: RequestId) => {
    if (open.delete(id) && open.size === 0) { for (const w of waiters) w(); }
  };
  transport.onmessage = (message: JSONRPCMessage, extra?: unknown) => {
    onTraffic();
    if ("method" in message && "id" in message) open.add(message.id);
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
