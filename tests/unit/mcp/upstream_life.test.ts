/**
 * One upstream's life against real in-process SDK servers, on a fake clock (issue 12 items 17
 * and 18): an error a live server answers — code -32000 and "socket" in its text included — is an
 * ordinary error, the connection kept; a connection that really dropped (its transport closed, or
 * it could not deliver) is closed and replaced, reads retried once, writes "outcome uncertain";
 * and a stop at any await of a connect closes what the connect opened and stays stopped, with no
 * timer left armed.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type CallToolResult, McpError } from "@modelcontextprotocol/sdk/types.js";
import { parseManifest } from "../../../src/manifest/load.ts";
import { OutcomeUncertain, UpstreamConnection, UpstreamUnavailable } from "../../../src/mcp/upstream.ts";
import { FakeClock } from "../../helpers/fake_clock.ts";
import { inProcessServer, settle, testOwner, tool } from "../../helpers/upstream.ts";

const config = (extra = "") =>
  parseManifest(
    `name: life\nexports: { tools: [read, write] }\nmcp_servers:\n  up: { command: unused${extra} }\n`,
    "/x/hermit.yaml",
    "/x",
  ).manifest.upstreams.up;

const text = (t: string): CallToolResult => ({ content: [{ type: "text", text: t }] });
const textOf = (r: CallToolResult) => (r.content as { text: string }[])[0].text;
const TOOLS = [tool("read"), tool("write", false)];

describe("connection loss is decided from the transport, not from error text (item 17)", () => {
  it("McpError(-32000, 'upstream DB socket timeout') from a live server is an ordinary error", async () => {
    let opened = 0;
    const up = new UpstreamConnection(
      config(),
      testOwner(new FakeClock(), () => {
        opened++;
        return inProcessServer(TOOLS, (name) => {
          if (name === "write") throw new McpError(-32000, "upstream DB socket timeout");
          return Promise.resolve(text("read ok"));
        }).transport;
      }),
    );
    await up.start();
    await assert.rejects(up.callTool("write", {}, { readOnly: false }), (err: unknown) => {
      assert.ok(err instanceof McpError && !(err instanceof OutcomeUncertain), String(err));
      assert.equal((err as McpError).code, -32000);
      assert.match((err as Error).message, /upstream DB socket timeout/);
      return true;
    });
    assert.equal(up.state, "connected", "not marked reconnecting");
    assert.equal(textOf(await up.callTool("read", {}, { readOnly: true })), "read ok");
    assert.equal(opened, 1, "the same connection serves on");
    await up.stop();
  });

  it("a dropped connection: a write is 'outcome uncertain', the dropped one closed, then reconnected", async () => {
    const clock = new FakeClock();
    const servers: ReturnType<typeof inProcessServer>[] = [];
    const up = new UpstreamConnection(
      config(),
      testOwner(clock, () => {
        const s = inProcessServer(TOOLS, async (name, _args, serverSide) => {
          if (servers.length === 1) {
            await serverSide.close(); // the server goes away mid-call
            return text("never seen");
          }
          return text(`${name} ok`);
        });
        servers.push(s);
        return s.transport;
      }),
    );
    await up.start();
    await assert.rejects(up.callTool("write", {}, { readOnly: false }), OutcomeUncertain);
    await servers[0].closed;
    assert.equal(up.state, "reconnecting");
    clock.advance(2_000); // the first backoff (1 s ± 20 %)
    await settle();
    assert.equal(up.state, "connected");
    assert.equal(servers.length, 2);
    assert.equal(textOf(await up.callTool("write", {}, { readOnly: false })), "write ok");
    await up.stop();
    assert.equal(clock.pending, 0, "no timer left behind");
  });

  it("a read under a dropped connection is retried once on a new one", async () => {
    const servers: ReturnType<typeof inProcessServer>[] = [];
    const up = new UpstreamConnection(
      config(),
      testOwner(new FakeClock(), () => {
        const s = inProcessServer(TOOLS, async (name, _args, serverSide) => {
          if (servers.length === 1) await serverSide.close();
          return text(`${name} from ${servers.length}`);
        });
        servers.push(s);
        return s.transport;
      }),
    );
    await up.start();
    assert.equal(textOf(await up.callTool("read", {}, { readOnly: true })), "read from 2");
    await servers[0].closed;
    await up.stop();
  });

  it("a transport that cannot deliver (an HTTP connection gone) is lost too, and closed", async () => {
    let closedTransports = 0;
    let failing = false;
    const up = new UpstreamConnection(
      config(),
      testOwner(new FakeClock(), () => {
        const inner = inProcessServer(TOOLS, () => Promise.resolve(text("ok"))).transport;
        const send = inner.send.bind(inner);
        const close = inner.close.bind(inner);
        return Object.assign(inner, {
          send: (m: Parameters<Transport["send"]>[0], o?: Parameters<Transport["send"]>[1]) =>
            failing ? Promise.reject(new TypeError("fetch failed")) : send(m, o),
          close: () => (closedTransports++, close()),
        });
      }),
    );
    await up.start();
    failing = true;
    await assert.rejects(up.callTool("write", {}, { readOnly: false }), OutcomeUncertain);
    await settle();
    assert.ok(closedTransports > 0, "the dropped connection was closed, not leaked");
    assert.equal(up.state, "reconnecting");
    await up.stop();
  });
});

describe("stop() during a connect (item 18)", () => {
  /** A server whose answer to `tools/list` (or to everything) waits `ms` on the fake clock. */
  function slowOn(
    clock: FakeClock,
    where: "initialize" | "tools/list",
    opened: { n: number; closed: number },
  ) {
    return () => {
      opened.n++;
      const s = inProcessServer(TOOLS, () => Promise.resolve(text("ok")), {
        beforeList: where === "tools/list"
          ? () => new Promise((r) => clock.setTimeout(() => r(), 1000))
          : undefined,
      });
      void s.closed.then(() => opened.closed++);
      if (where === "tools/list") return s.transport;
      const t = s.transport;
      const start = t.start.bind(t);
      // initialize's answer is held back until the clock moves
      return Object.assign(t, {
        start: async () => {
          await start();
          const deliver = t.onmessage;
          t.onmessage = (m, extra) => void clock.setTimeout(() => deliver?.(m, extra), 1000);
        },
      });
    };
  }

  for (const where of ["initialize", "tools/list"] as const) {
    it(`stopped while waiting for ${where}: the connect fails, what it opened is closed, it stays stopped`, async () => {
      const clock = new FakeClock();
      const opened = { n: 0, closed: 0 };
      // idle_timeout_seconds: a connect that went through would arm the recycle timer
      const up = new UpstreamConnection(
        config(", idle_timeout_seconds: 60"),
        testOwner(clock, slowOn(clock, where, opened)),
      );
      const connecting = up.ensureConnected();
      await settle();
      assert.equal(up.state, "connecting");
      await up.stop();
      clock.advance(5_000);
      await assert.rejects(connecting, (err: unknown) => {
        assert.ok(err instanceof UpstreamUnavailable, String(err));
        assert.equal((err as UpstreamUnavailable).reason, "stopped");
        return true;
      });
      await settle();
      assert.equal(up.state, "stopped");
      assert.equal(opened.closed, 1, "the connection the connect opened was closed");
      assert.equal(clock.pending, 0, "no recycle, keepalive, TTL or retry timer armed");
      await assert.rejects(up.ensureConnected(), /mcp_servers\.up is stopped/);
      assert.equal(opened.n, 1, "nothing opened after the stop");
    });
  }

  it("stopped during the reconnect backoff: no reconnect happens", async () => {
    const clock = new FakeClock();
    const servers: ReturnType<typeof inProcessServer>[] = [];
    const up = new UpstreamConnection(
      config(),
      testOwner(clock, () => {
        const s = inProcessServer(TOOLS, () => Promise.resolve(text("ok")));
        servers.push(s);
        return s.transport;
      }),
    );
    await up.start();
    await servers[0].serverSide.close();
    await settle();
    assert.equal(up.state, "reconnecting");
    await up.stop();
    clock.advance(120_000);
    await settle();
    assert.equal(up.state, "stopped");
    assert.equal(servers.length, 1);
    assert.equal(clock.pending, 0);
  });
});
