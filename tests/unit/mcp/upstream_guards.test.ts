/**
 * The guards against spawn storms, with a fake clock and counted transports: concurrent callers
 * share one connect attempt (duplicate-spawn guard); after a failure the server is not tried again
 * until its cooldown — min(30·2^(n-1), 600) s — has passed, and calls fail fast meanwhile. The
 * idle recycle runs on the same injected clock.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { parseManifest } from "../../../src/manifest/load.ts";
import { UpstreamConnection } from "../../../src/mcp/upstream.ts";
import { cooldownSeconds, jitteredBackoff } from "../../../src/mcp/upstream_lifecycle.ts";
import { FakeClock } from "../../helpers/fake_clock.ts";
import { testOwner } from "../../helpers/upstream.ts";

const config = parseManifest(
  "name: guards\nexports: { tools: [ping_tool] }\nmcp_servers:\n  up: { command: unused, tools: { include: [ping_tool] } }\n",
  "/x/hermit.yaml",
  "/x",
).manifest.upstreams.up;

/** A transport that fails to start: the server "cannot be spawned". */
class FailingTransport implements Transport {
  onclose?: () => void;
  onerror?: (e: Error) => void;
  onmessage?: () => void;
  start(): Promise<void> {
    return Promise.reject(new Error("spawn failed: no such server"));
  }
  send(): Promise<void> {
    return Promise.resolve();
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** A working in-process server that answers initialize only after `delayMs`. */
function slowServer(delayMs: number): Transport {
  const [client, server] = InMemoryTransport.createLinkedPair();
  const s = new Server({ name: "up", version: "1" }, { capabilities: { tools: {} } });
  s.setRequestHandler(
    ListToolsRequestSchema,
    () => ({ tools: [{ name: "ping_tool", inputSchema: { type: "object" } }] }),
  );
  s.setRequestHandler(CallToolRequestSchema, () => ({ content: [{ type: "text", text: "pong" }] }));
  const onmessage = () => server.onmessage;
  void s.connect(server).then(() => {
    const handle = onmessage();
    server.onmessage = (m, extra) => void setTimeout(() => handle?.(m, extra), delayMs);
  });
  return client;
}

describe("connect guards", () => {
  it("the cooldown curve: 30, 60, 120, 240, 480, 600, 600 s", () => {
    assert.deepEqual([1, 2, 3, 4, 5, 6, 7].map(cooldownSeconds), [30, 60, 120, 240, 480, 600, 600]);
  });

  it("the reconnect backoff: 1 → 60 s with ±20 % jitter", () => {
    assert.equal(jitteredBackoff(1, () => 0.5), 1000);
    assert.equal(jitteredBackoff(3, () => 0), 3200);
    assert.equal(jitteredBackoff(3, () => 1), 4800);
    assert.equal(jitteredBackoff(20, () => 0.5), 60_000);
  });

  it("ten concurrent calls start the server once", async () => {
    let opened = 0;
    const upstream = new UpstreamConnection(
      config,
      testOwner(new FakeClock(), () => (opened++, slowServer(30))),
    );
    // no start(): the first calls find it not connected
    const results = await Promise.all(
      Array.from({ length: 10 }, () => upstream.callTool("ping_tool", {}, { readOnly: true })),
    );
    assert.equal(opened, 1);
    assert.ok(results.every((r) => (r.content as { text: string }[])[0].text === "pong"));
    await upstream.stop();
  });

  it("after a failure: calls fail fast until the cooldown passes, then one new attempt", async () => {
    let opened = 0;
    const clock = new FakeClock();
    const up = new UpstreamConnection(config, testOwner(clock, () => (opened++, new FailingTransport())));
    await up.start();
    assert.equal(opened, 1);
    assert.equal(up.state, "cooldown");
    for (let i = 0; i < 5; i++) {
      await assert.rejects(
        up.ensureConnected(),
        /unavailable \(spawn failed: no such server\); next attempt in 30 s/,
      );
    }
    assert.equal(opened, 1, "no respawn during the cooldown");
    clock.advance(29_999);
    await assert.rejects(up.ensureConnected(), /next attempt in 1 s/);
    assert.equal(opened, 1);
    clock.advance(1);
    await assert.rejects(up.ensureConnected(), /failed to start/);
    assert.equal(opened, 2, "one attempt once the cooldown is over");
    await assert.rejects(up.ensureConnected(), /next attempt in 60 s/);
    assert.equal(up.status().failures, 2);
    await up.stop();
  });

  it("an idle stdio server is recycled on the injected clock, after idle_timeout_seconds", async () => {
    const idle = parseManifest(
      "name: guards\nexports: { tools: [ping_tool] }\nmcp_servers:\n  up: { command: unused, idle_timeout_seconds: 60, tools: { include: [ping_tool] } }\n",
      "/x/hermit.yaml",
      "/x",
    ).manifest.upstreams.up;
    let opened = 0;
    const clock = new FakeClock();
    const up = new UpstreamConnection(idle, testOwner(clock, () => (opened++, slowServer(0))));
    await up.start();
    assert.equal(up.state, "connected");
    clock.advance(59_000);
    assert.equal(up.state, "connected", "not before the idle timeout");
    clock.advance(1_000);
    assert.equal(up.state, "recycled");
    const r = await up.callTool("ping_tool", {}, { readOnly: true });
    assert.equal((r.content as { text: string }[])[0].text, "pong");
    assert.equal(opened, 2, "the next call starts it again");
    await up.stop();
  });
});
