/**
 * `trackInFlight` (`src/mcp/inflight.ts`): a session draining at stdin EOF waits for the requests
 * it has not answered, and a request the host cancelled is never answered (the MCP rule), so it
 * must not be waited for. A transport stand-in: the tracker only wraps `onmessage` and `send`.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { trackInFlight } from "../../../src/mcp/inflight.ts";

function transport(): Transport & { deliver(m: JSONRPCMessage): void } {
  const t = {
    start: async () => {},
    close: async () => {},
    send: async (_m: JSONRPCMessage) => {},
    onmessage: (_m: JSONRPCMessage) => {},
    deliver: (m: JSONRPCMessage) => t.onmessage(m),
  };
  return t as unknown as Transport & { deliver(m: JSONRPCMessage): void };
}

const turn = () => new Promise((r) => setImmediate(r));

describe("trackInFlight", () => {
  it("waits for an unanswered request, and is idle once it is answered", async () => {
    const t = transport();
    const inFlight = trackInFlight(t);
    t.deliver({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "x" } });
    let idle = false;
    void inFlight.idle(60_000).then(() => (idle = true));
    await turn();
    assert.equal(idle, false);
    await t.send({ jsonrpc: "2.0", id: 1, result: {} });
    await turn();
    assert.equal(idle, true);
  });

  it("does not wait for a request the host cancelled", async () => {
    const t = transport();
    const inFlight = trackInFlight(t);
    t.deliver({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "x" } });
    t.deliver({ jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "y" } });
    let idle = false;
    void inFlight.idle(60_000).then(() => (idle = true));
    t.deliver({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 7 } });
    await turn();
    assert.equal(idle, false, "request 8 is still open");
    await t.send({ jsonrpc: "2.0", id: 8, result: {} });
    await turn();
    assert.equal(idle, true);
  });

  it("counts a request under a reused id on its own: one answer does not settle both", async () => {
    const t = transport();
    const inFlight = trackInFlight(t);
    t.deliver({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "x" } });
    t.deliver({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "x" } });
    let idle = false;
    void inFlight.idle(60_000).then(() => (idle = true));
    await t.send({ jsonrpc: "2.0", id: 3, error: { code: -32600, message: "id 3 is in use" } });
    await turn();
    assert.equal(idle, false, "the first request under id 3 still runs");
    await t.send({ jsonrpc: "2.0", id: 3, result: {} });
    await turn();
    assert.equal(idle, true);
  });
});
