/**
 * A relay driven in-process against scripted service sessions (`Link`s) on a fake clock: each
 * session answers at once except the methods or tools it is told to hold, and, like a reader not
 * yet cancelled, can still deliver after `close()`. The host's side is what the relay wrote. For
 * rules that no real `fetch` can show (it delivers nothing after its abort); the relay's tests over
 * real HTTP are in `tests/unit/relay/` and `tests/e2e/relay_*`.
 */
import assert from "node:assert/strict";
import { parseMessage } from "../../src/relay/jsonrpc.ts";
import type { LinkHandlers, ServiceAddress } from "../../src/relay/link.ts";
import type { PostResult } from "../../src/relay/link_outcomes.ts";
import { type Connect, type Link, Relay, type RelayTarget } from "../../src/relay/relay.ts";
import { FakeClock } from "./fake_clock.ts";

export type Json = Record<string, unknown>;
export const line = (m: Json) => JSON.stringify(m);
export const request = (id: number, method: string, params?: Json) => ({
  jsonrpc: "2.0",
  id,
  method,
  params,
});
export const call = (id: number, name: string) => request(id, "tools/call", { name, arguments: {} });
const TOOLS = [
  { name: "read", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } },
  { name: "write", inputSchema: { type: "object" } },
];
/** What a scripted session answers `method` (a call of `tool`) with. */
export const resultFor = (method: string, tool: string | undefined, session: string) =>
  method === "initialize"
    ? {
      protocolVersion: "2025-06-18",
      capabilities: { tools: {} },
      serverInfo: { name: session, version: "0" },
    }
    : method === "tools/list"
    ? { tools: TOOLS }
    : { content: [{ type: "text", text: `${tool ?? method} ran on ${session}` }] };

/** The host's side: what the relay wrote, and checks over it. */
export function host(relay: Relay, out: Json[]) {
  return {
    send: (m: Json) => relay.fromHost(parseMessage(line(m))),
    answers: (id: number) => out.filter((m) => m.id === id && m.method === undefined),
    text: (id: number) =>
      ((out.find((m) => m.id === id)?.result as { content?: { text: string }[] } | undefined)?.content ?? [])[
        0
      ]
        ?.text,
  };
}

/** A scripted session that answers at once, except what it holds, and still delivers after close. */
export class ScriptedLink implements Link {
  /** Every message posted to it, in order. */
  readonly posts: Json[] = [];
  /** Requests it was sent, by id: answered when the test says (also after close). */
  readonly #sent = new Map<string | number, { m: Json; done: (r: PostResult) => void }>();
  closed = false;
  constructor(
    readonly handlers: LinkHandlers,
    readonly name: string,
    readonly hold: Set<string>,
    /** Methods whose POST fails before anything reached the service (a refused connection). */
    readonly unreachable: Set<string> = new Set(),
  ) {}

  post(text: string, id?: string | number): Promise<PostResult> {
    if (this.closed) return Promise.resolve({ kind: "failed", delivered: false, why: "closed" });
    const m = JSON.parse(text) as Json;
    if (this.unreachable.has(m.method as string)) {
      return Promise.resolve({ kind: "failed", delivered: false, why: "connection refused" });
    }
    this.posts.push(m);
    if (id === undefined) return Promise.resolve({ kind: "accepted" });
    return new Promise((done) => {
      this.#sent.set(id, { m, done });
      const tool = (m.params as { name?: string } | undefined)?.name;
      if (!this.hold.has(tool ?? (m.method as string))) this.answer(id);
    });
  }

  /** Answer request `id`; after close too, as a reader not yet cancelled would deliver it. */
  answer(id: string | number): void {
    const { m, done } = this.#sent.get(id)!;
    const tool = (m.params as { name?: string } | undefined)?.name;
    this.handlers.onMessage(
      parseMessage(line({ jsonrpc: "2.0", id, result: resultFor(m.method as string, tool, this.name) })),
    );
    done({ kind: "answered" });
  }

  openEventStream(): void {}
  setProtocolVersion(): void {}
  sessionAlive(): Promise<boolean> {
    return Promise.resolve(!this.closed);
  }
  close(): Promise<void> {
    this.closed = true;
    // what was held fails as an aborted fetch would (it may have run); its answer can still come
    for (const [id, s] of this.#sent) {
      s.done({ kind: "failed", delivered: true, why: "aborted" });
      this.#sent.set(id, { m: s.m, done: () => {} });
    }
    return Promise.resolve();
  }
}

/** Session `n` (0-based) holds the methods or tools `holdOn[n]`; its POSTs of `unreachable[n]` fail unsent. */
export function scripted(holdOn: string[][], unreachable: string[][] = []) {
  const links: ScriptedLink[] = [];
  const connect: Connect = (_addr, handlers) => {
    const n = links.length;
    const l = new ScriptedLink(
      handlers,
      `link ${n + 1}`,
      new Set(holdOn[n] ?? []),
      new Set(unreachable[n] ?? []),
    );
    links.push(l);
    return l;
  };
  const clock = new FakeClock();
  const out: Json[] = [];
  const addr: ServiceAddress = { url: "http://127.0.0.1:1/mcp" };
  const target: RelayTarget = { locate: async () => addr, unavailable: "no service" };
  const relay = new Relay({ target, out: (l) => out.push(JSON.parse(l)), clock, connect });
  /** Let the relay run, fake time moving, until `done`. */
  const run = async (done: () => boolean) => {
    for (let i = 0; i < 400 && !done(); i++) {
      for (let j = 0; j < 20; j++) await new Promise((r) => setImmediate(r));
      clock.advance(50);
    }
    assert.ok(done(), "the relay got there");
  };
  /** The session link `n` (1, 2, …) is gone: what it was running is in the air. */
  const lose = (n: number) => links[n - 1].handlers.streamRefused("session-gone");
  return { links, relay, out, run, lose, addr, ...host(relay, out) };
}
