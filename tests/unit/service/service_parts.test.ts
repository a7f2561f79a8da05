/**
 * The standalone service's pure parts: the bounded event store (ids, bounds, what a resume gets),
 * the drain sequence on a fake clock (finished, cut at the bound, hurried, the linger only when
 * clients were attached), request paths without a usable Host, what /health shows to whom, and
 * the checks a POST or GET passes before anything runs, and the bound on command-tool processes.
 * The parts run together against real sockets in
 * tests/e2e/service_*.test.ts.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ToolSlots } from "../../../src/mcp/tool_slots.ts";
import { drain, type Drainable, type DrainClock, FLUSH_MS, LINGER_MS } from "../../../src/service/drain.ts";
import { EventStore } from "../../../src/service/event_store.ts";
import { healthAnswer, type HealthFacts, liveAnswer } from "../../../src/service/health.ts";
import { checkGet, checkPost } from "../../../src/service/http_checks.ts";
import { requestPath } from "../../../src/service/http_handler.ts";

describe("EventStore", () => {
  it("numbers events per session and resumes a stream after a given id, that stream only", () => {
    const s = new EventStore();
    const a1 = s.append("a", "");
    s.append("b", '{"b":1}');
    s.append("a", '{"a":1}');
    s.append("a", '{"a":2}');
    assert.deepEqual(s.after(a1), {
      stream: "a",
      events: [{ id: 3, stream: "a", data: '{"a":1}' }, { id: 4, stream: "a", data: '{"a":2}' }],
    });
    assert.deepEqual(s.after("4")?.events, []);
  });

  it("forgets the oldest events past its bounds; an id it no longer has cannot be resumed", () => {
    const byCount = new EventStore(3, 1e6);
    for (let i = 0; i < 5; i++) byCount.append("a", `{"n":${i}}`);
    assert.equal(byCount.size.events, 3);
    assert.equal(byCount.after("2"), undefined);
    assert.deepEqual(byCount.after("3")?.events.map((e) => e.id), [4, 5]);
    const byBytes = new EventStore(100, 25);
    for (let i = 0; i < 5; i++) byBytes.append("a", "x".repeat(10));
    assert.ok(byBytes.size.bytes <= 25);
    assert.equal(byBytes.size.events, 2);
  });

  it("takes no malformed or unknown Last-Event-ID", () => {
    const s = new EventStore();
    s.append("a", "x");
    for (const bad of ["", "0", "-1", "abc", "1e3", "99", "1".repeat(20)]) {
      assert.equal(s.after(bad), undefined);
    }
  });
});

/** A registry stand-in: `inFlight` requests that finish when `finish()` is called. */
function fakeSessions(inFlight: number, count = 1) {
  let done!: () => void;
  const idle = new Promise<void>((r) => (done = r));
  if (inFlight === 0) done();
  const log: string[] = [];
  const s: Drainable & { finish(): void; log: string[] } = {
    inFlight,
    count,
    drain: () => (log.push("drain"), { idle, end: () => log.push("end") }),
    closeAll: () => log.push("closeAll"),
    finish: () => ((s as { inFlight: number }).inFlight = 0, done()),
    log,
  };
  return s;
}

/** Time that moves only when something sleeps; sleeps resolve in order of their end. */
function fakeClock() {
  let now = 0;
  const slept: number[] = [];
  const clock: DrainClock = {
    now: () => now,
    sleep: (ms, signal) =>
      new Promise((resolve, reject) => {
        slept.push(ms);
        if (signal.aborted) return reject(signal.reason);
        const t = setTimeout(() => ((now += ms), resolve()), 0);
        signal.addEventListener("abort", () => (clearTimeout(t), reject(signal.reason)), { once: true });
      }),
  };
  return { clock, slept, at: () => now };
}

describe("drain", () => {
  it("calls that finish in time: finished, then a linger of 503s for attached clients", async () => {
    const s = fakeSessions(2);
    const { clock, slept } = fakeClock();
    const done = drain(s, 20_000, clock, new AbortController().signal);
    s.finish();
    assert.deepEqual(await done, { finished: true, cut: 0 });
    assert.deepEqual(s.log, ["drain", "end", "closeAll"]);
    assert.equal(slept.at(-1), LINGER_MS);
  });

  it("calls past the bound are cut at the bound; only their answers get a moment to go out", async () => {
    const s = fakeSessions(3);
    const { clock, slept, at } = fakeClock();
    assert.deepEqual(await drain(s, 2000, clock, new AbortController().signal), { finished: false, cut: 3 });
    assert.deepEqual(slept, [2000, FLUSH_MS]);
    assert.equal(at(), 2000 + FLUSH_MS);
  });

  it("nothing attached and nothing in flight: done at once, no linger", async () => {
    const s = fakeSessions(0, 0);
    const { clock, slept } = fakeClock();
    assert.deepEqual(await drain(s, 2000, clock, new AbortController().signal), { finished: true, cut: 0 });
    assert.deepEqual(slept, [2000]); // the bound's timer, cancelled
  });

  it("a second stop request cuts the wait short", async () => {
    const s = fakeSessions(1);
    const hurry = new AbortController();
    const clock: DrainClock = {
      now: () => 0,
      sleep: (_ms, signal) =>
        new Promise((_, reject) =>
          signal.addEventListener("abort", () => reject(signal.reason), { once: true })
        ),
    };
    const done = drain(s, 60_000, clock, hurry.signal);
    hurry.abort();
    assert.deepEqual(await done, { finished: false, cut: 1 });
  });
});

describe("requestPath", () => {
  it("finds the path whatever the runtime made of a URL without a usable Host", () => {
    assert.equal(requestPath("/health"), "/health");
    assert.equal(requestPath("/health?x=1"), "/health");
    assert.equal(requestPath("http://localhost:8080/mcp"), "/mcp");
    assert.equal(requestPath("http://a b/health"), "/health");
    assert.equal(requestPath("http:///mcp#x"), "/mcp");
    assert.equal(requestPath("http://host"), "/");
  });
});

describe("checkPost and checkGet", () => {
  const post = (headers: Record<string, string>) =>
    new Request("http://127.0.0.1/mcp", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...headers,
      },
    });
  const init = (v: unknown) => ({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: v, capabilities: {}, clientInfo: { name: "t", version: "0" } },
  });
  const status = (v: ReturnType<typeof checkPost>) => ("refused" in v ? v.refused.status : 0);

  it("refuses what a client cannot take or did not send as JSON-RPC", () => {
    assert.equal(status(checkPost(post({ accept: "text/html" }), init("2025-06-18"), false)), 406);
    assert.equal(status(checkPost(post({ "content-type": "text/plain" }), init("2025-06-18"), false)), 415);
    for (const bad of [[], 42, "x", { jsonrpc: "1.0", method: "ping", id: 1 }, { jsonrpc: "2.0", id: {} }]) {
      assert.equal(status(checkPost(post({}), bad, true)), 400, JSON.stringify(bad));
    }
  });

  it("initialize: alone, once, settling the protocol version (the latest for one it does not speak)", () => {
    const ok = checkPost(post({}), init("2025-06-18"), false);
    assert.ok(!("refused" in ok) && ok.initializes === "2025-06-18");
    const unknown = checkPost(post({}), init("1999-01-01"), false);
    assert.ok(!("refused" in unknown) && unknown.initializes === "2025-11-25");
    assert.equal(status(checkPost(post({}), init("2025-06-18"), true)), 400);
    assert.equal(
      status(checkPost(post({}), [init("2025-06-18"), { jsonrpc: "2.0", method: "ping", id: 2 }], false)),
      400,
    );
  });

  it("later requests: only in an initialized session, with a protocol version hermit speaks", () => {
    const ping = { jsonrpc: "2.0", method: "ping", id: 2 };
    assert.equal(status(checkPost(post({}), ping, false)), 400);
    assert.equal(status(checkPost(post({ "mcp-protocol-version": "2099-01-01" }), ping, true)), 400);
    const taken = checkPost(
      post({ accept: "application/json" }),
      [ping, { jsonrpc: "2.0", method: "x/y" }],
      true,
    );
    assert.ok(
      !("refused" in taken) && taken.batch && taken.requests.length === 1 && taken.json && !taken.sse,
    );
    const get = (headers: Record<string, string>) => new Request("http://127.0.0.1/mcp", { headers });
    assert.equal(checkGet(get({ accept: "application/json" }))?.status, 406);
    assert.equal(checkGet(get({ accept: "text/event-stream" })), undefined);
  });
});

describe("health answers", () => {
  const facts = (phase: HealthFacts["phase"], upstreamsUp = true): HealthFacts => ({
    phase,
    upstreamsUp,
    details: () => ({
      adapter: "a",
      version: "0",
      pid: 1,
      uptime_s: 0,
      clients: 0,
      host_launched: false,
      tools: 1,
      upstreams: [],
    }),
  });

  it("readiness: 200 serving (ok or degraded), 503 starting or draining; the status only without the token", () => {
    assert.deepEqual(healthAnswer(facts("ready"), false), { status: 200, body: { status: "ok" } });
    assert.deepEqual(healthAnswer(facts("ready", false), false), {
      status: 200,
      body: { status: "degraded" },
    });
    assert.deepEqual(healthAnswer(facts("starting"), false), { status: 503, body: { status: "starting" } });
    assert.deepEqual(healthAnswer(facts("draining"), false), { status: 503, body: { status: "draining" } });
    const op = healthAnswer(facts("ready"), true).body as Record<string, unknown>;
    assert.equal(op.pid, 1);
  });

  it("liveness: 200 in every phase", () => {
    for (const p of ["starting", "ready", "draining"] as const) {
      assert.equal(liveAnswer(facts(p), false).status, 200);
    }
  });
});

describe("ToolSlots", () => {
  it("runs up to its bound at once and answers the next call with an error naming the bound", async () => {
    const slots = new ToolSlots(2);
    const gates: (() => void)[] = [];
    const slow = () =>
      slots.run(
        "t",
        () => new Promise((r) => gates.push(() => r({ content: [{ type: "text", text: "ok" }] }))),
      );
    const a = slow();
    const b = slow();
    const c = await slots.run("t", () => Promise.reject(new Error("must not start")));
    assert.equal(c.isError, true);
    assert.match(JSON.stringify(c.content), /serve\.max_tool_processes/);
    assert.equal(slots.running, 2);
    gates.forEach((g) => g());
    await Promise.all([a, b]);
    assert.equal(slots.running, 0);
    assert.equal((await slots.run("t", () => Promise.resolve({ content: [] }))).isError, undefined);
  });
});
