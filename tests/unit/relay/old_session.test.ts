/**
 * After the relay loses its service and attaches to a new session, the old session must not reach
 * the host: an answer reaches it only from the session its request went out on (and at most once),
 * and the old session's notifications and requests not at all. Two ways in:
 *
 * - a real loopback HTTP service (`ServiceLink` through the relay, real clock) that keeps writing
 *   to the old session's streams — the answer streams of a read and a write that were running, and
 *   its event stream — after the relay has moved on;
 * - a scripted link that, like a reader not yet cancelled, still delivers after `close()`: a late
 *   answer to a read already sent again on the new session, to a write already answered "outcome
 *   uncertain", to the host's own `initialize` (which must not wedge the new session), and a
 *   notification and a request of the session that is gone. This one is scripted because no real
 *   `fetch` here delivers after its abort; the relay must hold the rule without relying on that.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type ServerResponse } from "node:http";
import { parseMessage } from "../../../src/relay/jsonrpc.ts";
import type { ServiceAddress } from "../../../src/relay/link.ts";
import { Relay, type RelayTarget } from "../../../src/relay/relay.ts";
import { realClock } from "../../../src/platform/clock.ts";
import { setLogLevel } from "../../../src/log.ts";
import {
  initializedNotification as initialized,
  initializeRequest as initialize,
} from "../../helpers/relay_host.ts";
import { call, host, type Json, line, request, resultFor, scripted } from "../../helpers/scripted_relay.ts";

setLogLevel("error"); // the relay's warnings about each reconnect are expected here

const late = (session: string) => [
  { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: `from ${session}` } },
  { jsonrpc: "2.0", id: 0, method: "roots/list" },
];

/** Poll until `done` (real time), failing after `ms`. */
async function until(what: string, done: () => boolean, ms = 30_000): Promise<void> {
  for (const end = Date.now() + ms; !done(); await new Promise((r) => setTimeout(r, 20))) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
  }
}

/** A service on loopback that keeps the streams of a session it has forgotten open, and writes on. */
async function loopbackService() {
  let sessions = 0;
  const gone = new Set<string>();
  const open: { session: string; id?: number; res: ServerResponse; hungUp: boolean }[] = [];
  const hold = (o: { session: string; id?: number; res: ServerResponse }) => {
    const held = { ...o, hungUp: false };
    o.res.on("close", () => (held.hungUp = true));
    open.push(held);
  };
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8").on("data", (d) => (body += d)).on("end", () => {
      const session = req.headers["mcp-session-id"] as string | undefined;
      if (req.method === "DELETE") return void res.writeHead(200).end();
      if (session && gone.has(session)) return void res.writeHead(404).end();
      if (req.method === "GET") {
        res.on("error", () => {}).writeHead(200, { "content-type": "text/event-stream" }).write(": open\n\n");
        return void hold({ session: session!, res });
      }
      const m = JSON.parse(body) as Json;
      if (m.id === undefined) return void res.writeHead(202).end();
      const id = m.id as number;
      const sid = m.method === "initialize" ? `S${++sessions}` : session!;
      const tool = (m.params as { name?: string } | undefined)?.name;
      if (m.method === "tools/call" && sid === "S1") { // runs until after the relay moved on
        res.on("error", () => {}).writeHead(200, { "content-type": "text/event-stream" }).write(
          ": running\n\n",
        );
        return void hold({ session: sid, id, res });
      }
      res.writeHead(200, { "content-type": "application/json", "mcp-session-id": sid })
        .end(line({ jsonrpc: "2.0", id, result: resultFor(m.method as string, tool, sid) }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`,
    open,
    forget: (s: string) => gone.add(s),
    /** Write every late message on each of `session`'s streams still open. */
    writeLate(s: string): void {
      for (const o of open.filter((x) => x.session === s && !x.res.writableEnded)) {
        const msgs: Json[] = o.id === undefined ? late(s) : [
          { jsonrpc: "2.0", id: o.id, result: resultFor("tools/call", "late", s) },
          ...late(s),
        ];
        try {
          for (const m of msgs) o.res.write(`event: message\ndata: ${line(m)}\n\n`);
        } catch { /* the relay hung up: nothing can arrive */ }
      }
    },
    close(): void {
      for (const o of open) o.res.destroy();
      server.close();
    },
  };
}

describe("relay: a session left behind over real HTTP", () => {
  const closers: (() => void)[] = [];
  after(() => closers.forEach((c) => c()));

  it("the old session's late answers, notifications and requests never reach the host", async () => {
    const svc = await loopbackService();
    closers.push(() => svc.close());
    const addr: ServiceAddress = { url: svc.url };
    const out: Json[] = [];
    const target: RelayTarget = { locate: async () => addr, unavailable: "no service" };
    const relay = new Relay({ target, out: (l) => out.push(JSON.parse(l)), clock: realClock });
    closers.push(() => void relay.close());
    const h = host(relay, out);
    await relay.start(addr);
    h.send(initialize(1));
    h.send(initialized);
    h.send(request(2, "tools/list")); // learns that `read` is read-only
    await until("tools/list", () => h.answers(2).length === 1);
    await until("the event stream", () => svc.open.some((o) => o.id === undefined));
    h.send(call(3, "read"));
    h.send(call(4, "write"));
    await until("both calls running on S1", () => svc.open.filter((o) => o.id !== undefined).length === 2);

    svc.forget("S1"); // the service forgot S1 but holds its streams open
    h.send(request(5, "tools/list")); // answered 404: how the relay learns it
    await until("the relay moved to S2", () => h.answers(3).length + h.answers(4).length === 2, 60_000);
    await until("tools/list on S2", () => h.answers(5).length === 1);
    svc.writeLate("S1");
    h.send(request(6, "ping"));
    await until("a ping on S2", () => h.answers(6).length === 1);
    await new Promise((r) => setTimeout(r, 300)); // time for anything late to arrive

    assert.equal(h.text(3), "read ran on S2", "the read went again on S2; S1's late answer is not passed on");
    assert.match((h.answers(4)[0].error as { message: string }).message, /^outcome uncertain: .*write/);
    for (const id of [1, 2, 3, 4, 5, 6]) assert.equal(h.answers(id).length, 1, `one answer for ${id}`);
    assert.deepEqual(out.filter((m) => m.method !== undefined), [], "nothing of S1's reached the host");
    const s1 = svc.open.filter((o) => o.session === "S1");
    assert.deepEqual(
      s1.map((o) => o.hungUp),
      [true, true, true],
      "the relay hung up on each of S1's streams",
    );
    await relay.close();
  });
});

describe("relay: a session left behind that still delivers after close", () => {
  it("a late answer to a read sent again, or to a write answered 'outcome uncertain', is dropped", async () => {
    const t = scripted([["read", "write"], ["read"]]);
    await t.relay.start(t.addr);
    t.send(initialize(1));
    t.send(initialized);
    t.send(request(2, "tools/list"));
    await t.run(() => t.answers(2).length === 1);
    t.send(call(3, "read"));
    t.send(call(4, "write"));
    await t.run(() => t.links[0].posts.length === 5);
    t.lose(1);
    await t.run(() => t.links[1]?.posts.some((m) => m.id === 3) === true && t.answers(4).length === 1);
    assert.ok(t.links[0].closed, "the old session was ended");

    // the old session's readers were not cancelled: what they carried arrives now
    t.links[0].answer(3);
    t.links[0].answer(4);
    for (const m of late("link 1")) t.links[0].handlers.onMessage(parseMessage(line(m)));
    t.links[1].answer(3);
    await t.run(() => t.answers(3).length >= 1);

    assert.equal(t.text(3), "read ran on link 2", "the answer of the session the read went out on");
    assert.match((t.answers(4)[0].error as { message: string }).message, /^outcome uncertain: .*write/);
    for (const id of [1, 2, 3, 4]) assert.equal(t.answers(id).length, 1, `one answer for ${id}`);
    assert.deepEqual(t.out.filter((m) => m.method !== undefined), [], "nothing of link 1's reached the host");
    await t.relay.close();
  });

  it("a late answer to the host's initialize from the old session does not wedge the new one", async () => {
    const t = scripted([["initialize"], ["initialize"]]);
    await t.relay.start(t.addr);
    t.send(initialize(1));
    await t.run(() => t.links[0].posts.length === 1);
    t.lose(1);
    await t.run(() => t.links[1]?.posts.some((m) => m.method === "initialize") === true);
    t.links[0].answer(1); // late, from the session that is gone
    t.links[1].answer(1);
    t.send(initialized);
    t.send(request(2, "tools/list"));
    await t.run(() => t.answers(2).length === 1);
    const serverInfo = (t.answers(1)[0].result as { serverInfo: { name: string } }).serverInfo;
    assert.equal(serverInfo.name, "link 2", "the host's initialize was answered by the session it opened");
    assert.equal(t.answers(1).length, 1);
    assert.deepEqual(t.links[1].posts.map((m) => m.method), [
      "initialize",
      "notifications/initialized",
      "tools/list",
    ]);
    await t.relay.close();
  });
});
