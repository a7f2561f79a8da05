/**
 * With a fake clock: an upstream's tool list carries `ttlMs`; when it runs out the gateway
 * re-lists, and the host's session receives `notifications/tools/list_changed` and sees the new
 * list, with or without a schema cache. Also `ttlMs: 0` is no hint (no refresh is scheduled), and
 * `ttlMs: 1` counts as a second.
 * Real gateway, real session server, real SDK client; the upstream is an SDK server in process.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  ListToolsRequestSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { parseManifest } from "../../../src/manifest/load.ts";
import { Gateway } from "../../../src/mcp/gateway.ts";
import { SchemaCache } from "../../../src/mcp/schema_cache.ts";
import { realClock } from "../../../src/platform/clock.ts";
import { createSessionServer } from "../../../src/mcp/server.ts";
import { FakeClock } from "../../helpers/fake_clock.ts";
import { tempDir } from "../../helpers/tmp.ts";

const manifest = parseManifest(
  "name: ttl\nexports: { tools: [alpha, beta] }\nmcp_servers:\n  up: { command: unused }\n",
  "/x/hermit.yaml",
  "/x",
).manifest;

const tool = (name: string) => ({ name, description: name, inputSchema: { type: "object" as const } });

/** An in-process upstream whose first listing has alpha, later ones alpha and beta. */
function upstreamFactory(ttlMs: number) {
  let listings = 0;
  return () => {
    const [client, server] = InMemoryTransport.createLinkedPair();
    const s = new Server({ name: "up", version: "1" }, { capabilities: { tools: { listChanged: true } } });
    s.setRequestHandler(ListToolsRequestSchema, () => {
      listings++;
      return { tools: listings === 1 ? [tool("alpha")] : [tool("alpha"), tool("beta")], ttlMs } as never;
    });
    void s.connect(server);
    return client;
  };
}

async function host(gateway: Gateway) {
  const session = createSessionServer(gateway);
  const [a, b] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "host", version: "0" });
  let changed = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
  await session.server.connect(b);
  await client.connect(a);
  return { client, changes: () => changed };
}

const until = async (cond: () => boolean, what: string) => {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(cond(), what);
};

describe("ttlMs refresh (fake clock)", () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());

  it("re-lists when the TTL runs out and tells the host with list_changed", async () => {
    const clock = new FakeClock();
    const cache = new SchemaCache(path.join(tmp.path, "a"), () => clock.now());
    const gateway = new Gateway(manifest, {
      clock,
      transportFactory: upstreamFactory(60_000),
      schemaCache: cache,
    });
    await gateway.start();
    const h = await host(gateway);
    assert.deepEqual((await h.client.listTools()).tools.map((t) => t.name), ["alpha"]);

    clock.advance(59_999);
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(h.changes(), 0, "nothing before the TTL runs out");

    clock.advance(1);
    await until(() => h.changes() === 1, "list_changed reached the host");
    assert.deepEqual((await h.client.listTools()).tools.map((t) => t.name), ["alpha", "beta"]);
    const entry = cache.read(manifest.upstreams.up)!;
    assert.deepEqual(entry.tools.map((t) => t.name), ["alpha", "beta"], "the cache was written through");
    assert.equal(entry.ttl_ms, 60_000);
    await gateway.stop();
  });

  it("without a schema cache the TTL is followed all the same", async () => {
    const clock = new FakeClock();
    const gateway = new Gateway(manifest, {
      clock,
      transportFactory: upstreamFactory(60_000),
      schemaCache: null,
    });
    await gateway.start();
    const h = await host(gateway);
    assert.deepEqual((await h.client.listTools()).tools.map((t) => t.name), ["alpha"]);
    clock.advance(59_999);
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(h.changes(), 0, "nothing before the TTL runs out");
    clock.advance(1);
    await until(() => h.changes() === 1, "list_changed reached the host");
    assert.deepEqual((await h.client.listTools()).tools.map((t) => t.name), ["alpha", "beta"]);
    await gateway.stop();
  });

  it("ttlMs: 1 counts as a second: no re-listing before it, one when it runs out", async () => {
    const clock = new FakeClock();
    const gateway = new Gateway(manifest, { clock, transportFactory: upstreamFactory(1), schemaCache: null });
    await gateway.start();
    const h = await host(gateway);
    for (let i = 0; i < 9; i++) {
      clock.advance(111);
      await new Promise((r) => setTimeout(r, 5));
    }
    assert.equal(h.changes(), 0, "nothing within the first second");
    clock.advance(1);
    await until(() => h.changes() === 1, "list_changed reached the host");
    assert.deepEqual((await h.client.listTools()).tools.map((t) => t.name), ["alpha", "beta"]);
    await gateway.stop();
  });

  it("ttlMs: 0 is no hint: nothing is scheduled, the entry never expires", async () => {
    const clock = new FakeClock();
    const cache = new SchemaCache(path.join(tmp.path, "b"), () => clock.now());
    const gateway = new Gateway(manifest, {
      clock,
      transportFactory: upstreamFactory(0),
      schemaCache: cache,
    });
    await gateway.start();
    const h = await host(gateway);
    clock.advance(365 * 24 * 3600 * 1000);
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(h.changes(), 0);
    assert.equal(cache.read(manifest.upstreams.up)?.ttl_ms, undefined);
    assert.ok(cache.get(manifest.upstreams.up), "still fresh a year later");
    await gateway.stop();
  });
});

describe("the real clock's timers", () => {
  it("wait longer than 2^31 - 1 ms in steps instead of firing at once; cleared, they never fire", async () => {
    let fired = 0;
    const long = realClock.setTimeout(() => fired++, 30 * 24 * 3600 * 1000);
    const justOver = realClock.setTimeout(() => fired++, 2 ** 31);
    let short = 0;
    realClock.setTimeout(() => short++, 5);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(short, 1, "an ordinary delay fires");
    assert.equal(fired, 0, "a month is not a millisecond");
    realClock.clearTimeout(long);
    realClock.clearTimeout(justOver);
  });
});
