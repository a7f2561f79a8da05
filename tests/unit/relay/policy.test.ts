/**
 * `src/relay/policy.ts`: what the relay does with requests caught when its service goes
 * away — never delivered or maybe delivered, sent again or answered "outcome uncertain", expired
 * after the wait limit — and how it paces its attempts.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { JSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";
import {
  backoffMs,
  expiredRequests,
  type Outage,
  safeToRepeat,
  settleSent,
  WAIT_MS,
  type Waiting,
} from "../../../src/relay/policy.ts";

const req = (id: number, method: string, name?: string): JSONRPCRequest => ({
  jsonrpc: "2.0",
  id,
  method,
  ...(name ? { params: { name } } : {}),
});
const waiting = (r: JSONRPCRequest, at = 0): Waiting => ({ req: r, at });
const readOnly = new Set(["read_graph"]);

describe("safeToRepeat", () => {
  it("reads are; a tools/call only for a read-only tool", () => {
    assert.equal(safeToRepeat(req(1, "tools/list"), readOnly), true);
    assert.equal(safeToRepeat(req(1, "resources/read"), readOnly), true);
    assert.equal(safeToRepeat(req(1, "tools/call", "read_graph"), readOnly), true);
    assert.equal(safeToRepeat(req(1, "tools/call", "create_entities"), readOnly), false);
    assert.equal(safeToRepeat(req(1, "tools/call"), readOnly), false);
    assert.equal(safeToRepeat(req(1, "initialize"), readOnly), false);
  });
});

describe("settleSent", () => {
  it("sends an unanswered initialize again, first; reads again; writes are uncertain; queued ones wait", () => {
    const pending = [
      waiting(req(2, "tools/call", "create_entities")),
      waiting(req(3, "tools/list")),
      waiting(req(1, "initialize")),
      waiting(req(4, "tools/call", "read_graph")),
      waiting(req(5, "tools/call", "create_entities")),
    ];
    const { resend, uncertain } = settleSent(pending, new Set([1, 2, 3, 4]), readOnly);
    assert.deepEqual(resend.map((w) => w.req.id), [1, 3, 4]);
    assert.deepEqual(uncertain.map((w) => w.req.id), [2]);
  });
});

describe("expiredRequests", () => {
  const outage: Outage = { since: 10_000, connects: 0, warned: false };
  it("a request waits from its arrival or the outage's start, whichever is later", () => {
    const pending = [waiting(req(1, "tools/list"), 0), waiting(req(2, "tools/list"), 20_000)];
    const at = (now: number) =>
      expiredRequests(pending, new Set(), readOnly, outage, now, "gone").map((e) => e.id);
    assert.deepEqual(at(10_000 + WAIT_MS - 1), []);
    assert.deepEqual(at(10_000 + WAIT_MS), [1]);
    assert.deepEqual(at(20_000 + WAIT_MS), [1, 2]);
  });

  it("an initialize and a read get 'unavailable'; a write that was sent gets 'outcome uncertain'", () => {
    const pending = [
      waiting(req(1, "initialize")),
      waiting(req(2, "tools/call", "create_entities")),
      waiting(req(3, "tools/call", "create_entities")),
      waiting(req(4, "tools/list")),
    ];
    const expired = expiredRequests(
      pending,
      new Set([1, 2, 4]),
      readOnly,
      outage,
      1e9,
      "the x service does not answer",
    );
    assert.deepEqual(expired.map((e) => [e.id, e.message.split(":")[0]]), [
      [1, "hermit"],
      [2, "outcome uncertain"],
      [3, "hermit"],
      [4, "hermit"],
    ]);
    assert.equal(expired[0].message, "hermit: the x service does not answer");
  });
});

describe("backoffMs", () => {
  it("250 ms doubling, at most 5 s", () => {
    assert.deepEqual([1, 2, 3, 4, 5, 6, 20].map(backoffMs), [250, 500, 1000, 2000, 4000, 5000, 5000]);
  });
});
