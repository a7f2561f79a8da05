/**
 * The two fast paths for `tools/call` against the SDK they go around, side by side on in-memory
 * transports: the host side (`host_fast_calls.ts`) must send the host exactly what the SDK's
 * Server sends for the same handler (results checked and normalized by the schema, thrown errors,
 * progress, nothing after a cancel); the upstream side (`upstream_fast_calls.ts`, through
 * `Link.callTool`) must give the same result or error as `Client.callTool` and send the server
 * the same messages (ids from the client's counter, the progress token, the cancellation on abort
 * or timeout), and fail what is open when the connection closes.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  type JSONRPCMessage,
  LATEST_PROTOCOL_VERSION,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { type CallHandler, fastCalls } from "../../../src/mcp/host_fast_calls.ts";
import { Link } from "../../../src/mcp/upstream_client.ts";

const tick = (ms = 0) => new Promise((r) => setTimeout(r, ms));

/** What a host receives for `requests` when `handler` answers tools/call: via the SDK, or the fast path. */
async function hostSees(
  via: "sdk" | "fast",
  handler: CallHandler,
  requests: JSONRPCMessage[],
): Promise<JSONRPCMessage[]> {
  const [host, side] = InMemoryTransport.createLinkedPair();
  const seen: JSONRPCMessage[] = [];
  host.onmessage = (m) => void seen.push(m);
  await host.start();
  if (via === "sdk") {
    const server = new Server({ name: "s", version: "1" }, { capabilities: { tools: {} } });
    server.setRequestHandler(
      CallToolRequestSchema,
      (req, extra) => handler(req as never, extra as never) as never,
    );
    await server.connect(side);
  } else {
    const fast = fastCalls(side, handler);
    side.onmessage = (m) => {
      if (!fast.take(m)) fast.cancelled(m);
    };
    await side.start();
  }
  for (const r of requests) await host.send(r);
  await tick(30);
  await host.close();
  return seen;
}

const call = (
  id: number,
  args: Record<string, unknown> = {},
  meta?: Record<string, unknown>,
): JSONRPCMessage => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "t", arguments: args, ...(meta && { _meta: meta }) },
});

describe("the host side's fast tools/call", () => {
  const returning = (value: unknown): CallHandler => () => Promise.resolve(value);
  const throwing = (err: unknown): CallHandler => () => Promise.reject(err);
  const cases: [string, CallHandler][] = [
    ["a text result", returning({ content: [{ type: "text", text: "hi" }] })],
    [
      "structured content and isError",
      returning({ content: [], structuredContent: { a: 1 }, isError: true }),
    ],
    [
      "an image and a key of its own",
      returning({ content: [{ type: "image", data: "aGk=", mimeType: "image/png" }], x: 1 }),
    ],
    ["no content (the schema's default)", returning({})],
    [
      "a text block with extra keys (the schema drops them)",
      returning({ content: [{ type: "text", text: "a", y: 2 }] }),
    ],
    ["a result the schema refuses", returning({ content: "not a list" })],
    ["a thrown Error", throwing(new Error("boom"))],
    [
      "a thrown error with a code and data",
      throwing(Object.assign(new Error("bad"), { code: -32602, data: { d: 1 } })),
    ],
    ["a thrown McpError", throwing(new McpError(ErrorCode.InvalidParams, "nope"))],
    ["a thrown non-error", throwing("plain")],
    ["progress, then a result", async (req, extra) => {
      const token = (req.params._meta as { progressToken?: number } | undefined)?.progressToken;
      await extra.sendNotification({
        method: "notifications/progress",
        params: { progressToken: token!, progress: 1 },
      });
      return { content: [{ type: "text", text: `${extra.requestId}` }] };
    }],
  ];
  for (const [what, handler] of cases) {
    it(`answers as the SDK's Server does: ${what}`, async () => {
      const reqs = [call(1, { a: 1 }, { progressToken: "p" }), call(2)];
      assert.deepStrictEqual(await hostSees("fast", handler, reqs), await hostSees("sdk", handler, reqs));
    });
  }

  it("sends nothing for a cancelled call, and aborts its handler", async () => {
    for (const via of ["sdk", "fast"] as const) {
      let aborted: unknown;
      const handler: CallHandler = async (_req, extra) => {
        await tick(10);
        aborted = extra.signal.reason;
        return { content: [] };
      };
      const seen = await hostSees(via, handler, [
        call(7),
        { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 7, reason: "user" } },
      ]);
      assert.deepStrictEqual(seen, [], via);
      assert.equal(aborted, "user", via);
    }
  });

  it("a second call under an id in flight is refused; the first stays cancellable", async () => {
    let aborted: unknown;
    const handler: CallHandler = async (_req, extra) => {
      await tick(10);
      aborted ??= extra.signal.reason;
      return { content: [] };
    };
    const seen = await hostSees("fast", handler, [
      call(1),
      call(1, { second: true }),
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1, reason: "user" } },
    ]);
    assert.deepStrictEqual(seen, [{
      jsonrpc: "2.0",
      id: 1,
      error: {
        code: ErrorCode.InvalidRequest,
        message: "Invalid request: id 1 is in use by a call in flight",
      },
    }]);
    assert.equal(aborted, "user", "the first call was the one cancelled");
  });

  it("a call with id 0 is cancelled like any other", async () => {
    let aborted: unknown;
    const handler: CallHandler = async (_req, extra) => {
      await tick(10);
      aborted = extra.signal.reason;
      return { content: [] };
    };
    const seen = await hostSees("fast", handler, [
      call(0),
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 0, reason: "user" } },
    ]);
    assert.deepStrictEqual(seen, []);
    assert.equal(aborted, "user");
  });

  it("leaves to the SDK what it cannot vouch for: a task, odd params, an own __proto__ argument", () => {
    const fast = fastCalls(
      { send: () => Promise.resolve() } as never,
      () => Promise.resolve({ content: [] }),
    );
    assert.equal(fast.take(call(1)), true);
    for (
      const m of [
        { ...call(2), params: { name: "t", task: { ttl: 5 } } },
        { ...call(3), params: { name: 5 } },
        { ...call(4), params: JSON.parse('{"name":"t","arguments":{"__proto__":{"a":1}}}') },
        { jsonrpc: "2.0", id: 5, method: "tools/list" },
        { jsonrpc: "2.0", method: "tools/call", params: { name: "t" } },
      ] as JSONRPCMessage[]
    ) assert.equal(fast.take(m), false, JSON.stringify(m));
  });
});

/** A scripted upstream on an in-memory pair: answers initialize, then `reply` decides each call. */
async function upstream(
  reply: (m: JSONRPCMessage & { id: number }, send: (m: JSONRPCMessage) => void) => void,
) {
  const [mine, theirs] = InMemoryTransport.createLinkedPair();
  const received: JSONRPCMessage[] = [];
  const send = (m: JSONRPCMessage) => void theirs.send(m);
  theirs.onmessage = (m) => {
    received.push(m);
    if (!("method" in m) || !("id" in m)) return;
    if (m.method === "initialize") {
      send({
        jsonrpc: "2.0",
        id: m.id,
        result: {
          protocolVersion: LATEST_PROTOCOL_VERSION,
          capabilities: { tools: {} },
          serverInfo: { name: "u", version: "1" },
        },
      });
    } else if (m.method === "tools/list") {
      send({
        jsonrpc: "2.0",
        id: m.id,
        result: {
          tools: [{
            name: "typed",
            inputSchema: { type: "object" },
            outputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
          }],
        },
      });
    } else reply(m as JSONRPCMessage & { id: number }, send);
  };
  await theirs.start();
  const client = new Client({ name: "hermit", version: "0" });
  const link = new Link(client, mine, () => {});
  await client.connect(mine);
  link.responsesAfterNotifications();
  return { link, client, received, close: () => theirs.close() };
}

type Outcome = {
  result?: unknown;
  error?: { name: string; message: string; code?: unknown; data?: unknown };
};
const outcome = (p: Promise<unknown>): Promise<Outcome> =>
  p.then(
    (result) => ({ result }),
    (e) => ({ error: { name: e.name, message: e.message, code: e.code, data: e.data } }),
  );

/** The calls' messages as the server saw them, ids made relative to the first call's. */
function relative(received: JSONRPCMessage[]): unknown[] {
  const calls = received.filter((m) =>
    "method" in m && m.method !== "initialize" && m.method !== "notifications/initialized"
  );
  const first = (calls.find((m) => "id" in m) as { id: number } | undefined)?.id ?? 0;
  return calls.map((m) =>
    JSON.parse(
      JSON.stringify(m),
      (k, v) =>
        (k === "id" || k === "requestId" || k === "progressToken") && typeof v === "number" ? v - first : v,
    )
  );
}

describe("the upstream side's fast tools/call", () => {
  const scripts: [string, (m: JSONRPCMessage & { id: number }, send: (m: JSONRPCMessage) => void) => void][] =
    [
      [
        "a text result",
        (m, send) => send({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: "ok" }] } }),
      ],
      [
        "an image and keys of its own",
        (m, send) =>
          send({
            jsonrpc: "2.0",
            id: m.id,
            result: {
              content: [{ type: "image", data: "aGk=", mimeType: "image/png" }],
              z: 1,
              _meta: { k: 1 },
            },
          }),
      ],
      [
        "a result the schema refuses",
        (m, send) => send({ jsonrpc: "2.0", id: m.id, result: { content: "x" } }),
      ],
      [
        "an error answer",
        (m, send) =>
          send({ jsonrpc: "2.0", id: m.id, error: { code: -32000, message: "nope", data: { x: 1 } } }),
      ],
      ["progress, then the result in the same turn", (m, send) => {
        const token = (m as { params: { _meta?: { progressToken?: number } } }).params._meta?.progressToken;
        send({
          jsonrpc: "2.0",
          method: "notifications/progress",
          params: { progressToken: token!, progress: 1, total: 2, message: "half" },
        });
        send(
          {
            jsonrpc: "2.0",
            method: "notifications/progress",
            params: { progressToken: token!, progress: "bad" },
          } as never,
        );
        send({ jsonrpc: "2.0", id: m.id, result: { content: [] } });
      }],
      [
        "an answer by a string id",
        (m, send) => send({ jsonrpc: "2.0", id: String(m.id), result: { content: [] } }),
      ],
      ["no answer (timeout)", () => {}],
    ];
  for (const [what, script] of scripts) {
    it(`gives what Client.callTool gives and sends the same: ${what}`, async () => {
      const runs = [];
      for (const via of ["sdk", "fast"] as const) {
        const u = await upstream(script);
        const progress: unknown[] = [];
        const opts = { timeout: 100, onprogress: (p: unknown) => void progress.push(p) };
        const res = await outcome(
          via === "sdk"
            ? u.client.callTool({ name: "t", arguments: { a: 1 } }, undefined, opts)
            : u.link.callTool({ name: "t", arguments: { a: 1 } }, opts),
        );
        await tick(20);
        runs.push({ res, progress, sent: relative(u.received) });
        await u.close();
      }
      assert.deepStrictEqual(runs[1], runs[0]);
    });
  }

  it("cancels on abort as the SDK does, and fails open calls when the connection closes", async () => {
    const runs = [];
    for (const via of ["sdk", "fast"] as const) {
      const u = await upstream(() => {});
      const ac = new AbortController();
      const call = (signal?: AbortSignal) =>
        outcome(
          via === "sdk"
            ? u.client.callTool({ name: "t" }, undefined, { signal })
            : u.link.callTool({ name: "t" }, { signal }),
        );
      const aborted = call(ac.signal);
      const open = call();
      ac.abort("enough");
      await tick(5);
      await u.close();
      runs.push({ aborted: await aborted, closed: await open, sent: relative(u.received) });
    }
    assert.deepStrictEqual(runs[1], runs[0]);
    assert.equal((runs[1].closed.error as { code?: unknown }).code, ErrorCode.ConnectionClosed);
  });

  it("takes the fast path for a plain tool, and leaves a tool with an output schema to the client", async () => {
    const u = await upstream((m, send) => send({ jsonrpc: "2.0", id: m.id, result: { content: [] } }));
    await u.client.listTools(); // the client learns `typed` has an output schema
    const seen: string[] = [];
    const original = u.client.callTool.bind(u.client);
    u.client.callTool = ((...a: Parameters<Client["callTool"]>) => {
      seen.push(a[0].name);
      return original(...a);
    }) as Client["callTool"];
    await u.link.callTool({ name: "plain" }, {});
    const typed = await outcome(u.link.callTool({ name: "typed" }, {}));
    assert.deepStrictEqual(
      seen,
      ["typed"],
      "only the tool with an output schema went through Client.callTool",
    );
    assert.match(typed.error!.message, /output schema but did not return structured content/);
    await u.close();
  });
});
