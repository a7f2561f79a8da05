/**
 * `src/relay/relay.ts`, the relay's state machine, on a fake clock with a scripted service: what
 * waits before a session exists (ping answered here, a request before any initialize refused as
 * JSON-RPC says, the rest sent once initialize is answered), a 4xx passed on as an answer with
 * the relay still attached, every abandoned session closed, and the outage rules — a service that
 * answers 5xx gets the host an error after the 30 s wait limit, at a paced rate, with its own
 * initialize or with a failed replay — in fake seconds. The scripted service stands in for HTTP,
 * which `ServiceLink` speaks against real services in tests/e2e/relay_*.test.ts.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseMessage } from "../../../src/relay/jsonrpc.ts";
import type { LinkHandlers, ServiceAddress } from "../../../src/relay/link.ts";
import type { PostResult } from "../../../src/relay/link_outcomes.ts";
import type { Connect, Link, RelayTarget } from "../../../src/relay/relay.ts";
import { Relay } from "../../../src/relay/relay.ts";
import { WAIT_MS } from "../../../src/relay/policy.ts";
import { setLogLevel } from "../../../src/log.ts";
import { FakeClock } from "../../helpers/fake_clock.ts";

setLogLevel("error"); // the relay's warnings about each reconnect are expected here

type Json = Record<string, unknown>;
const line = (m: Json) => JSON.stringify(m);
const initialize = (id: number | string = 1) => ({
  jsonrpc: "2.0",
  id,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } },
});
const initialized = { jsonrpc: "2.0", method: "notifications/initialized" };
const request = (id: number, method: string, params?: Json) => ({ jsonrpc: "2.0", id, method, params });

/** A scripted service: answers like a hermit service, or fails every POST the way it is told. */
class Scripted {
  mode: "ok" | "5xx" | "413" | "refused-connection" = "ok";
  /** How many more tools/call posts get the service's "busy" (its max_connections) first. */
  busy = 0;
  /** Every notification gets the service's "busy" (its max_connections). */
  busyNotifications = false;
  readonly posts: Json[] = [];
  links = 0;
  readonly closed: number[] = [];
  /** Requests whose answer is held back until `release`. */
  readonly held = new Map<string, () => void>();
  holdMethods = new Set<string>();
  /** Tools that "run" until the link is dropped (their answer never comes). */
  hang = new Set<string>();
  readonly #live = new Set<number>();

  connect: Connect = (_addr, handlers: LinkHandlers) => {
    const n = ++this.links;
    this.#live.add(n);
    const link: Link = {
      post: (text, id) => this.#post(n, handlers, text, id),
      openEventStream: () => {},
      close: () => (this.#live.delete(n), this.closed.push(n), Promise.resolve()),
      setProtocolVersion: () => {},
      sessionAlive: async () => true,
    };
    return link;
  };

  get live(): number[] {
    return [...this.#live];
  }

  release(method: string): void {
    this.held.get(method)?.();
    this.held.delete(method);
  }

  async #post(n: number, h: LinkHandlers, text: string, id?: string | number): Promise<PostResult> {
    const m = JSON.parse(text) as Json;
    this.posts.push(m);
    if (this.mode === "refused-connection") return { kind: "failed", delivered: false, why: "ECONNREFUSED" };
    if (this.mode === "5xx") return { kind: "failed", delivered: true, why: "HTTP 500: upstream broke" };
    if (this.mode === "413" && m.method === "tools/call") {
      return { kind: "rejected", status: 413, code: -32600, message: "Request body over 4194304 bytes" };
    }
    if (id === undefined && this.busyNotifications) {
      return { kind: "busy", retryMs: 100, why: "HTTP 503: busy" };
    }
    if (id !== undefined && this.holdMethods.has(m.method as string)) {
      await new Promise<void>((r) => this.held.set(m.method as string, r));
    }
    if (m.method === "tools/call" && this.busy > 0 && !this.hang.has((m.params as { name: string }).name)) {
      this.busy--;
      return {
        kind: "busy",
        retryMs: 1000,
        why: "HTTP 503: 2 requests are open at once (serve.max_connections)",
      };
    }
    if (id === undefined) return { kind: "accepted" };
    const method = m.method as string;
    const tool = (m.params as { name?: string } | undefined)?.name;
    if (tool && this.hang.has(tool)) {
      await new Promise<void>((r) => {
        const check = setInterval(() => !this.#live.has(n) && (clearInterval(check), r()), 1);
      });
      return { kind: "failed", delivered: true, why: "the connection was reset" };
    }
    const result = method === "initialize"
      ? {
        protocolVersion: "2025-06-18",
        capabilities: { tools: {} },
        serverInfo: { name: "s", version: "0" },
      }
      : method === "tools/list"
      ? { tools: [{ name: "read", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } }] }
      : { content: [{ type: "text", text: `ran ${tool ?? method}` }] };
    h.onMessage(parseMessage(line({ jsonrpc: "2.0", id, result })));
    return { kind: "answered" };
  }
}

const ADDR: ServiceAddress = { url: "http://127.0.0.1:1/mcp", token: "t" };

function setup(svc: Scripted, locate?: (clock: FakeClock) => RelayTarget["locate"]) {
  const clock = new FakeClock();
  const out: Json[] = [];
  const target: RelayTarget = {
    locate: locate?.(clock) ?? (async () => ADDR),
    unavailable: "the shared service at http://127.0.0.1:1 does not answer",
  };
  const relay = new Relay({ target, out: (l) => out.push(JSON.parse(l)), clock, connect: svc.connect });
  const send = (m: Json) => relay.fromHost(parseMessage(line(m)));
  const answer = (id: number | string) => out.find((m) => m.id === id);
  return { clock, out, relay, send, answer };
}

/** Let promise chains and immediates run (the scripted service answers without real I/O). */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
}

/** Advance the fake clock in steps, letting the relay run between them, until `done` or `ms` pass. */
async function run(clock: FakeClock, ms: number, done: () => boolean = () => false): Promise<number> {
  const start = clock.now();
  while (clock.now() - start < ms && !done()) {
    await settle();
    clock.advance(50);
  }
  await settle();
  return clock.now() - start;
}

describe("relay: before a session exists", () => {
  it("a ping is answered at once; a request before initialize gets Invalid Request; the rest waits for the session", async () => {
    const svc = new Scripted();
    svc.holdMethods.add("initialize");
    const { relay, send, answer, clock } = setup(svc);
    await relay.start(ADDR);
    send(request(7, "ping"));
    send(request(8, "tools/list"));
    await settle();
    assert.deepEqual(answer(7), { jsonrpc: "2.0", id: 7, result: {} });
    assert.equal((answer(8)?.error as { code: number }).code, -32600);
    assert.match((answer(8)?.error as { message: string }).message, /before initialize/);
    send(initialize());
    send(request(2, "ping")); // allowed before the initialize answer: answered here
    send(request(3, "tools/list")); // waits for the session
    send(initialized);
    await settle();
    assert.deepEqual(answer(2), { jsonrpc: "2.0", id: 2, result: {} });
    assert.deepEqual(
      svc.posts.map((p) => p.method),
      ["initialize"],
      "nothing but initialize without a session",
    );
    svc.release("initialize");
    await run(clock, 200, () => answer(3) !== undefined);
    assert.ok(answer(1)?.result);
    assert.ok(answer(3)?.result, "tools/list went once the session existed");
    assert.deepEqual(svc.posts.map((p) => p.method), [
      "initialize",
      "notifications/initialized",
      "tools/list",
    ]);
    assert.equal(svc.links, 1, "no reconnect");
  });
});

describe("relay: answers the service gives", () => {
  it("a 413 is an answer naming the limit; the relay stays on the same session", async () => {
    const svc = new Scripted();
    const { relay, send, answer, clock } = setup(svc);
    await relay.start(ADDR);
    send(initialize());
    send(initialized);
    await settle();
    svc.mode = "413";
    send(request(2, "tools/call", { name: "echo", arguments: { pad: "x" } }));
    await run(clock, 200, () => answer(2) !== undefined);
    const error = answer(2)?.error as { code: number; message: string };
    assert.equal(error.code, -32600);
    assert.match(error.message, /HTTP 413, larger than it accepts\): Request body over 4194304 bytes/);
    svc.mode = "ok";
    send(request(3, "tools/call", { name: "echo", arguments: {} }));
    await run(clock, 200, () => answer(3) !== undefined);
    assert.ok(answer(3)?.result);
    assert.equal(svc.links, 1, "still attached: no reconnect");
  });
});

describe("relay: a busy service (its max_connections)", () => {
  it("the request goes again on the same session after Retry-After; the call in flight there is untouched", async () => {
    const svc = new Scripted();
    svc.hang = new Set(["write"]);
    const { relay, send, answer, clock } = setup(svc);
    await relay.start(ADDR);
    send(initialize());
    send(initialized);
    await settle();
    send(request(2, "tools/call", { name: "write", arguments: {} })); // runs on
    svc.busy = 3;
    send(request(3, "tools/call", { name: "read", arguments: {} }));
    const took = await run(clock, 10_000, () => answer(3) !== undefined);
    assert.ok(answer(3)?.result, JSON.stringify(answer(3)));
    assert.ok(took >= 3000, `sent again after each Retry-After (${took} ms)`);
    assert.equal(svc.posts.filter((p) => (p.params as { name?: string })?.name === "read").length, 4);
    assert.equal(answer(2), undefined, "the write is still running: not answered 'outcome uncertain'");
    assert.equal(svc.links, 1, "no reconnect");
    assert.deepEqual(svc.closed, [], "the session was not ended");
    await relay.close();
  });

  it("a request held while the service is busy and then cancelled by the host is never sent", async () => {
    const svc = new Scripted();
    const { relay, send, answer, clock } = setup(svc);
    await relay.start(ADDR);
    send(initialize());
    send(initialized);
    await settle();
    svc.busy = 1;
    send(request(7, "tools/call", { name: "delete_everything", arguments: {} }));
    await settle();
    send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 7, reason: "user" } });
    await run(clock, 5000);
    const calls = svc.posts.filter((p) => p.method === "tools/call").length;
    assert.equal(calls, 1, "only the try the service turned away");
    assert.equal(answer(7), undefined, "no answer to a cancelled request");
    assert.equal(relay.waiting, 0);
    await relay.close();
  });

  it("a request cancelled while its POST is out, then answered busy, is not sent again", async () => {
    const svc = new Scripted();
    svc.holdMethods.add("tools/call"); // the POST is out; its answer ("busy") comes later
    const { relay, send, answer, clock } = setup(svc);
    await relay.start(ADDR);
    send(initialize());
    send(initialized);
    await settle();
    svc.busy = 1;
    send(request(7, "tools/call", { name: "delete_everything", arguments: {} }));
    await settle();
    send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 7 } });
    await settle();
    svc.holdMethods.clear();
    svc.release("tools/call");
    await run(clock, 5000);
    assert.equal(svc.posts.filter((p) => p.method === "tools/call").length, 1, "never sent again");
    assert.ok(svc.posts.some((p) => p.method === "notifications/cancelled"), "the service was told");
    assert.equal(answer(7), undefined);
    assert.equal(relay.waiting, 0);
    await relay.close();
  });

  it("busy for the whole wait limit: the request gets an error naming the limit, the session stays", async () => {
    const svc = new Scripted();
    const { relay, send, answer, clock } = setup(svc);
    await relay.start(ADDR);
    send(initialize());
    send(initialized);
    await settle();
    svc.busy = 1_000;
    send(request(2, "tools/call", { name: "read", arguments: {} }));
    const took = await run(clock, WAIT_MS + 5000, () => answer(2) !== undefined);
    assert.match((answer(2)?.error as { message: string }).message, /serve\.max_connections/);
    assert.ok(took >= WAIT_MS - 1000, `${took} ms`);
    assert.equal(svc.links, 1);
    svc.busy = 0;
    send(request(3, "tools/call", { name: "read", arguments: {} }));
    await run(clock, 2000, () => answer(3) !== undefined);
    assert.ok(answer(3)?.result);
    await relay.close();
  });
});

describe("relay: a notification the service keeps answering 'busy'", () => {
  it("goes again within the wait limit, then is dropped: not sent forever", async () => {
    const svc = new Scripted();
    const { relay, send, clock } = setup(svc);
    await relay.start(ADDR);
    send(initialize());
    await settle();
    svc.busyNotifications = true;
    send({ jsonrpc: "2.0", method: "notifications/roots/list_changed" });
    await run(clock, WAIT_MS + 10_000);
    const sent = () => svc.posts.filter((p) => p.method === "notifications/roots/list_changed").length;
    const after = sent();
    assert.ok(after > 10 && after <= WAIT_MS / 100 + 1, `${after} sends`);
    await run(clock, 10_000);
    assert.equal(sent(), after, "no more after the limit");
    await relay.close();
  });
});

describe("relay: the service goes away", () => {
  it("a write in flight is 'outcome uncertain', a read goes again; the abandoned session is closed", async () => {
    const svc = new Scripted();
    svc.hang = new Set(["write", "read"]);
    const { relay, send, answer, clock } = setup(svc);
    await relay.start(ADDR);
    send(initialize());
    send(initialized);
    send(request(2, "tools/list")); // learns that `read` is read-only
    await run(clock, 200, () => answer(2) !== undefined);
    send(request(3, "tools/call", { name: "write", arguments: {} }));
    send(request(4, "tools/call", { name: "read", arguments: {} }));
    await settle();
    svc.hang = new Set();
    svc.mode = "refused-connection";
    send(request(5, "tools/list")); // its failure is how the relay learns the service is gone
    await settle();
    svc.mode = "ok";
    await run(
      clock,
      10_000,
      () => answer(3) !== undefined && answer(4) !== undefined && answer(5) !== undefined,
    );
    assert.match((answer(3)?.error as { message: string }).message, /^outcome uncertain: .*write/);
    assert.equal(answer(4)?.result !== undefined, true, "the read was sent again");
    assert.ok(answer(5)?.result, "never delivered: sent again");
    assert.ok(svc.closed.includes(1), "the abandoned session was ended");
    await relay.close();
    assert.deepEqual(svc.live, [], "and the last one at exit");
  });

  it("5xx to the host's own initialize: an error after the 30 s wait, paced, in fake time", async () => {
    const svc = new Scripted();
    svc.mode = "5xx";
    const { relay, send, answer, clock } = setup(svc);
    await relay.start(ADDR);
    send(initialize());
    const waited = await run(clock, 60_000, () => answer(1) !== undefined);
    assert.match(
      (answer(1)?.error as { message: string }).message,
      /^hermit: the shared service at .* does not answer$/,
    );
    assert.ok(waited >= WAIT_MS && waited < WAIT_MS + 6000, `answered after ${waited} ms of fake time`);
    assert.ok(svc.posts.length < 15, `paced: ${svc.posts.length} POSTs in ${waited} ms`);
    const closed = svc.closed.length;
    assert.equal(closed, svc.links - (svc.live.length), "every abandoned session was closed");
    await relay.close();
  });

  it("a search for the service that itself takes minutes (a launch waiting on a lock): the wait limit still holds", async () => {
    const svc = new Scripted();
    let calls = 0;
    // the first search answers at once; every later one takes 120 s (another launcher holds the lock)
    const { relay, send, answer, clock } = setup(
      svc,
      (c) => () =>
        ++calls === 1 ? Promise.resolve(ADDR) : new Promise((r) => c.setTimeout(() => r(ADDR), 120_000)),
    );
    await relay.start(ADDR);
    send(initialize());
    send(initialized);
    await settle();
    svc.mode = "refused-connection";
    send(request(2, "tools/list"));
    const waited = await run(clock, 150_000, () => answer(2) !== undefined);
    assert.match((answer(2)?.error as { message: string }).message, /does not answer$/);
    assert.ok(waited >= WAIT_MS && waited < WAIT_MS + 3000, `answered after ${waited} ms of fake time`);
    await relay.close();
  });

  it("5xx after the session was up: the replayed initialize fails; the waiting request gets the error after 30 s", async () => {
    const svc = new Scripted();
    const { relay, send, answer, clock } = setup(svc);
    await relay.start(ADDR);
    send(initialize());
    send(initialized);
    send(request(2, "tools/list"));
    await run(clock, 200, () => answer(2) !== undefined);
    svc.mode = "5xx";
    send(request(3, "tools/list"));
    const waited = await run(clock, 60_000, () => answer(3) !== undefined);
    assert.match((answer(3)?.error as { message: string }).message, /does not answer$/);
    assert.ok(waited >= WAIT_MS && waited < WAIT_MS + 6000, `answered after ${waited} ms of fake time`);
    const replays = svc.posts.filter((p) => p.method === "initialize").length - 1;
    assert.ok(replays >= 3 && replays < 15, `paced replays: ${replays}`);
    // the relay lives on: the service comes back and the host is served again
    svc.mode = "ok";
    send(request(4, "tools/list"));
    await run(clock, 10_000, () => answer(4) !== undefined);
    assert.ok(answer(4)?.result, "served again once the service works");
    await relay.close();
  });
});
