/**
 * The host side of stdio (src/mcp/stdio_host.ts) on real streams: an oversize line that answers one
 * of hermit's own requests (a huge elicitation or sampling answer) fails that request; any other
 * oversize line with an id is answered with an error for that id; nothing closes the transport.
 */
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { describe, it } from "node:test";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { HostStdioTransport } from "../../../src/mcp/stdio_host.ts";
import { waitFor } from "../../helpers/procs.ts";

function wire(max: number) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const out: JSONRPCMessage[] = [];
  stdout.setEncoding("utf8").on(
    "data",
    (d: string) => d.split("\n").filter(Boolean).forEach((l) => out.push(JSON.parse(l))),
  );
  const t = new HostStdioTransport(stdin, stdout, max);
  const got: JSONRPCMessage[] = [];
  t.onmessage = (m) => got.push(m);
  let closed = false;
  t.onclose = () => (closed = true);
  return { stdin, stdout, out, got, t, closed: () => closed };
}

describe("HostStdioTransport: oversize lines", () => {
  it("a huge answer to hermit's own request fails that request", async () => {
    const w = wire(1000);
    await w.t.start();
    await w.t.send({ jsonrpc: "2.0", id: 7, method: "elicitation/create", params: {} } as JSONRPCMessage);
    const answer = `{"result":{"content":"${"x".repeat(5000)}"},"jsonrpc":"2.0","id":7}`;
    w.stdin.write(`${answer}\n`);
    await waitFor(() => w.got[0], { timeoutMs: 5000, what: "the failed answer" });
    assert.deepEqual(w.got[0], {
      jsonrpc: "2.0",
      id: 7,
      error: {
        code: -32603,
        message:
          `the host answered with ${answer.length} bytes, over hermit's limit of 1000 bytes per message`,
      },
    });
    assert.equal(w.closed(), false);
  });

  it("any other oversize line with an id gets an error answer for that id; a notification none", async () => {
    const w = wire(1000);
    await w.t.start();
    w.stdin.write(
      `{"params":{"x":"${"y".repeat(5000)}"},"weird":1,"method":"tools/call","id":"q","jsonrpc":"2.0"}\n`,
    );
    w.stdin.write(`{"jsonrpc":"2.0","method":"notifications/x","params":{"x":"${"y".repeat(5000)}"}}\n`);
    w.stdin.write(`{"params":{"x":"${"y".repeat(5000)}"},"method":"m","params2":1,"id":9}\n`);
    w.stdin.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    await waitFor(() => w.got.length === 1 && w.out.length === 2, {
      timeoutMs: 5000,
      what: "two answers and the ping",
    });
    assert.deepEqual(
      w.out.map((m) => [(m as { id: unknown }).id, (m as { error: { code: number } }).error.code]),
      [
        ["q", -32600],
        [9, -32600],
      ],
    );
    assert.match(
      (w.out[0] as { error: { message: string } }).error.message,
      /^the tools\/call request is 5\d+ bytes/,
    );
    assert.match((w.out[1] as { error: { message: string } }).error.message, /^the request is 5\d+ bytes/);
    assert.deepEqual(w.got, [{ jsonrpc: "2.0", id: 1, method: "ping" }]);
  });
});

describe("HostStdioTransport: the end of stdin", () => {
  it("a last message without a newline is read, not dropped", async () => {
    const w = wire(1000);
    await w.t.start();
    w.stdin.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"jsonrpc":"2.0","id":25,"method":"ping"}');
    w.stdin.end();
    await waitFor(() => w.got.length === 2 || undefined, {
      timeoutMs: 5000,
      what: () => JSON.stringify(w.got),
    });
    assert.deepEqual(w.got.map((m) => (m as { id: number }).id), [1, 25]);
  });
});

describe("HostStdioTransport: ids", () => {
  it("an id beyond 2^53 is no id of this host's: answered with id null, never a rounded one", async () => {
    const w = wire(1000);
    await w.t.start();
    w.stdin.write('{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}\n');
    await waitFor(() => w.out[0], { timeoutMs: 5000, what: "the answer" });
    assert.equal((w.out[0] as { id: unknown }).id, null, JSON.stringify(w.out[0]));
    assert.deepEqual(w.got, []);
  });
});

describe("HostStdioTransport: a host that closes stdout", () => {
  it("ends the session at the first answer it cannot take (stdin still open)", async () => {
    const w = wire(1000);
    await w.t.start();
    w.stdin.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    await waitFor(() => w.got[0], { timeoutMs: 5000, what: "the request" });
    w.stdout.destroy();
    await w.t.send({ jsonrpc: "2.0", id: 1, result: {} } as JSONRPCMessage);
    await waitFor(() => w.closed() || undefined, { timeoutMs: 5000, what: "the transport to close" });
  });
});
