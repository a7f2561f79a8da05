/**
 * The service's requests to the host across a reconnect (`src/relay/asked.ts`): each session
 * numbers its requests from 0, so an approval the user gives late, for the session that is gone,
 * must not become the answer to the new session's request with the same id. The requests reach
 * the host under ids of the relay's; an answer goes only to the session that asked, under its id;
 * the service's cancellation names the id the host knows.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { AskedOfHost } from "../../../src/relay/asked.ts";
import { parseMessage } from "../../../src/relay/jsonrpc.ts";
import { setLogLevel } from "../../../src/log.ts";
import {
  initializedNotification as initialized,
  initializeRequest as initialize,
} from "../../helpers/relay_host.ts";
import { call, type Json, line, request, scripted } from "../../helpers/scripted_relay.ts";

setLogLevel("error"); // the relay's warnings about the reconnect are expected here

const elicit = (id: number, about: string) =>
  request(id, "elicitation/create", {
    message: `approve ${about}?`,
    requestedSchema: { type: "object", properties: {} },
  });
const accept = (id: unknown, note: string) => ({
  jsonrpc: "2.0",
  id,
  result: { action: "accept", content: { note } },
});

describe("relay: the service's requests to the host, across sessions", () => {
  it("a late answer to the old session's request never answers the new session's request with the same id", async () => {
    const t = scripted([["write"], []]);
    await t.relay.start(t.addr);
    t.send(initialize(1));
    t.send(initialized);
    await t.run(() => t.answers(1).length === 1);
    t.send(call(2, "write")); // held: the service asks the host to approve it
    await t.run(() => t.links[0].posts.some((m) => m.id === 2));
    t.links[0].handlers.onMessage(parseMessage(line(elicit(0, "write on link 1"))));
    await t.run(() => t.out.some((m) => m.method === "elicitation/create"));
    const first = t.out.find((m) => m.method === "elicitation/create")!;

    t.lose(1); // the service went away while the user looks at the approval
    await t.run(() => t.answers(2).length === 1 && t.links[1] !== undefined);
    t.links[1].handlers.onMessage(parseMessage(line(elicit(0, "something else on link 2"))));
    await t.run(() => t.out.filter((m) => m.method === "elicitation/create").length === 2);
    const second = t.out.filter((m) => m.method === "elicitation/create")[1];
    assert.notEqual(second.id, first.id, "the host can tell the two requests apart");

    t.send(accept(first.id, "for link 1's write")); // late: that session is gone
    t.send(accept(second.id, "for link 2"));
    await t.run(() => t.links[1].posts.some((m) => m.id === 0 && m.result !== undefined));
    const answers = t.links[1].posts.filter((m) => m.method === undefined);
    assert.deepEqual(answers, [accept(0, "for link 2")], "only its own answer, under its own id");
    assert.equal(t.links[0].posts.filter((m) => m.method === undefined).length, 0);
    await t.relay.close();
  });

  it("the service's cancellation of its request names the id the host knows", async () => {
    const t = scripted([[]]);
    await t.relay.start(t.addr);
    t.send(initialize(1));
    t.send(initialized);
    await t.run(() => t.answers(1).length === 1);
    const link = t.links[0];
    link.handlers.onMessage(parseMessage(line(elicit(7, "x"))));
    link.handlers.onMessage(parseMessage(line({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 7, reason: "the call timed out" },
    })));
    // a cancellation of a request the host was never sent is not passed on
    link.handlers.onMessage(parseMessage(line({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 99 },
    })));
    await t.run(() => t.out.some((m) => m.method === "notifications/cancelled"));
    const asked = t.out.find((m) => m.method === "elicitation/create")!;
    const cancelled = t.out.filter((m) => m.method === "notifications/cancelled");
    assert.deepEqual(cancelled, [{
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: asked.id, reason: "the call timed out" },
    }]);
    t.send(accept(asked.id, "too late")); // answered after the cancellation: nobody waits
    await t.run(() => true);
    assert.equal(link.posts.filter((m) => m.method === undefined).length, 0);
    await t.relay.close();
  });
});

describe("AskedOfHost", () => {
  const req = (id: number | string, method = "roots/list") =>
    parseMessage(line({ jsonrpc: "2.0", id, method }));
  const res = (id: unknown, result: Json = {}) => parseMessage(line({ jsonrpc: "2.0", id, result }));

  it("renames each request; an answer goes back once, to its session, under its id", () => {
    const a = new AskedOfHost<string>();
    const one = JSON.parse(a.ask(req(0) as never, "s1"));
    const two = JSON.parse(a.ask(req("x") as never, "s1"));
    assert.notEqual(one.id, two.id);
    assert.deepEqual(a.answer(res(two.id, { roots: [] }) as never), {
      session: "s1",
      text: line({ jsonrpc: "2.0", id: "x", result: { roots: [] } }),
    });
    assert.equal(a.answer(res(two.id) as never), undefined, "answered once");
    assert.equal(a.answer(res("x") as never), undefined, "the session's own id means nothing to the host");
    assert.equal(a.size, 1);
  });

  it("a new session forgets what the others asked", () => {
    const a = new AskedOfHost<string>();
    const old = JSON.parse(a.ask(req(0) as never, "s1"));
    const now = JSON.parse(a.ask(req(0) as never, "s2"));
    a.forgetAllBut("s2");
    assert.equal(a.answer(res(old.id) as never), undefined);
    assert.equal(a.answer(res(now.id) as never)?.session, "s2");
  });
});

describe("relay: the host's notifications/initialized across sessions", () => {
  it("one that never reached the old session is not sent twice to the new one", async () => {
    const t = scripted([[], []], [["notifications/initialized"]]);
    await t.relay.start(t.addr);
    t.send(initialize(1));
    await t.run(() => t.answers(1).length === 1);
    t.send(initialized); // its POST fails unsent: the relay moves to a new session
    await t.run(() => t.links[1]?.posts.some((m) => m.method === "notifications/initialized") === true);
    t.send(request(2, "tools/list"));
    await t.run(() => t.answers(2).length === 1);
    assert.deepEqual(t.links[1].posts.map((m) => m.method), [
      "initialize",
      "notifications/initialized",
      "tools/list",
    ]);
    await t.relay.close();
  });
});
