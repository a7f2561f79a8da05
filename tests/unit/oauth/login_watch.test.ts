/**
 * With a fake clock: an upstream that needs a login fails with the one clear line, does not
 * retry during its cooldown, but connects at once when the stored login changes — on the next
 * call, or by itself within the poll interval (and then tells the host its tools changed).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { parseManifest } from "../../../src/manifest/load.ts";
import { NeedsLogin } from "../../../src/mcp/oauth/errors.ts";
import { LOGIN_POLL_MS } from "../../../src/mcp/oauth/login_watch.ts";
import { UpstreamConnection, type UpstreamOwner } from "../../../src/mcp/upstream.ts";
import { FakeClock } from "../../helpers/fake_clock.ts";

const config = parseManifest(
  "name: t\nexports: { tools: [whoami] }\nmcp_servers:\n  remote: { url: 'https://mcp.example/mcp', auth: oauth }\n",
  "/x/hermit.yaml",
  "/x",
).manifest.upstreams.remote;

const LINE = "mcp_servers.remote needs a login: run 'hermit login /x remote'";

function owner(clock: FakeClock) {
  const state = { stamp: "none", loggedIn: false, attempts: 0, toolsChanged: 0 };
  const o: UpstreamOwner = {
    clock,
    openTransport: () => {
      state.attempts++;
      if (!state.loggedIn) throw new NeedsLogin("remote", "/x");
      const [client, server] = InMemoryTransport.createLinkedPair();
      const s = new Server({ name: "up", version: "1" }, { capabilities: { tools: {} } });
      s.setRequestHandler(ListToolsRequestSchema, () => ({
        tools: [{ name: "whoami", inputSchema: { type: "object" as const } }],
      }));
      void s.connect(server);
      return { transport: client, describe: "in process", unresolved: [] };
    },
    onToolsChanged: () => void state.toolsChanged++,
    onPromptsChanged: () => {},
    onResourcesChanged: () => {},
    onStderrLine: () => {},
    handleServerRequest: () => Promise.resolve({}),
    onNotification: () => {},
    credentialsStamp: () => state.stamp,
  };
  return { o, state };
}

const until = async (cond: () => boolean, what: string) => {
  for (let i = 0; i < 400 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(cond(), what);
};

describe("an upstream waiting for a login", () => {
  it("fails with the one line and does not retry until the stored login changes", async () => {
    const clock = new FakeClock();
    const { o, state } = owner(clock);
    const conn = new UpstreamConnection(config, o);
    await assert.rejects(conn.ensureConnected(), (e: Error) => e.message === LINE);
    assert.equal(conn.state, "cooldown");
    assert.equal(conn.lastError, LINE);
    await assert.rejects(conn.ensureConnected(), (e: Error) => e.message === LINE);
    clock.advance(LOGIN_POLL_MS * 3);
    assert.equal(state.attempts, 1, "no retry while nothing changed");
    // `hermit login` elsewhere: the next call connects at once, 30 s of cooldown or not
    state.loggedIn = true;
    state.stamp = "new";
    await conn.ensureConnected();
    assert.equal(conn.state, "connected");
    assert.equal(state.attempts, 2);
    await conn.stop();
  });

  it("connects by itself within the poll interval and announces its tools", async () => {
    const clock = new FakeClock();
    const { o, state } = owner(clock);
    const conn = new UpstreamConnection(config, o);
    await conn.start();
    assert.equal(conn.state, "cooldown");
    state.loggedIn = true;
    state.stamp = "new";
    clock.advance(LOGIN_POLL_MS);
    await until(() => conn.state === "connected", "connected after the poll");
    assert.deepEqual(conn.tools.map((t) => t.exported), ["whoami"]);
    await until(() => state.toolsChanged === 1, "the host is told about the new tools");
    await conn.stop();
    assert.equal(clock.pending, 0, "no timer left behind");
  });

  it("stops polling when stopped", async () => {
    const clock = new FakeClock();
    const { o, state } = owner(clock);
    const conn = new UpstreamConnection(config, o);
    await conn.start();
    await conn.stop();
    state.loggedIn = true;
    state.stamp = "new";
    clock.advance(LOGIN_POLL_MS * 2);
    assert.equal(state.attempts, 1);
  });
});
