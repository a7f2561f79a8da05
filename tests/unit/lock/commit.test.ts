/**
 * What `hermit add` writes into hermit.lock when the lock on disk changed while its entry ran:
 * the lock as it is now with the added server's entry from the run, so a server another add locked
 * meanwhile is kept; without a readable lock on disk, the run's whole lock.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { lockWithServer } from "../../../src/lock/commit.ts";
import type { Lock, LockedServer } from "../../../src/lock/types.ts";

const server = (command: string): LockedServer => ({ command, tools: {} });
const lock = (servers: Record<string, LockedServer>): Lock => ({ format: 1, servers });

describe("lockWithServer", () => {
  it("keeps a server another writer locked meanwhile, and takes the added one from the run", () => {
    const ran = lock({ base: server("base v1"), memory: server("memory") });
    const now = lock({ base: server("base v2"), thinking: server("thinking") });
    const out = lockWithServer({ kind: "ok", lock: now }, ran, "memory");
    assert.deepEqual(out.servers, {
      base: server("base v2"),
      thinking: server("thinking"),
      memory: server("memory"),
    });
  });

  it("the added server's entry is the run's even when the lock on disk has one by that name", () => {
    const out = lockWithServer(
      { kind: "ok", lock: lock({ memory: server("old") }) },
      lock({ memory: server("new") }),
      "memory",
    );
    assert.deepEqual(out.servers, { memory: server("new") });
  });

  it("without a readable lock on disk: the run's whole lock", () => {
    const ran = lock({ base: server("base"), memory: server("memory") });
    assert.equal(lockWithServer({ kind: "none" }, ran, "memory"), ran);
    assert.equal(lockWithServer({ kind: "invalid", why: "x" }, ran, "memory"), ran);
  });

  it("a server named __proto__ is an entry like any other", () => {
    const proto = JSON.parse('{"__proto__": {"command": "p", "tools": {}}}') as Record<string, LockedServer>;
    const out = lockWithServer({ kind: "ok", lock: lock({ a: server("a") }) }, lock(proto), "__proto__");
    assert.deepEqual(Object.keys(out.servers).sort(), ["__proto__", "a"]);
    assert.equal(Object.getPrototypeOf(out.servers), Object.prototype);
  });
});
