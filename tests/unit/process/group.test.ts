/**
 * `src/process/group.ts` (and its registry, `group_registry.ts`) with real processes: every child
 * in its own process group, and `stop()` (stdin close, SIGTERM to the group, grace, SIGKILL)
 * leaving nothing of the group behind.
 * Linux: inspects /proc.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { type ProcessGroup, spawnInGroup, stopAllGroups } from "../../../src/process/group.ts";
import { activeGroups, onGroupChange } from "../../../src/process/group_registry.ts";
import { tempDir } from "../../helpers/tmp.ts";
import { alive, descendants, groupMembers, readUntil, Reaper, stat, waitFor } from "../../helpers/procs.ts";

const reaper = new Reaper();
const dir = tempDir("hermit-group-");
after(async () => {
  await reaper.reap();
  dir.cleanup();
});

function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = "";
    stream.on("data", (d) => (out += d));
    stream.on("end", () => resolve(out));
    stream.on("error", reject);
  });
}

const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };

/** Spawn `sh -c script` in its own group and wait until it has printed `ready`. */
async function shell(script: string): Promise<ProcessGroup> {
  const g = spawnInGroup("sh", ["-c", script], { env });
  reaper.track(g.pgid);
  reaper.trackGroup(g.pgid);
  await readUntil(g.child.stdout!, "ready");
  return g;
}

describe("spawnInGroup", { timeout: 60000 }, () => {
  it("puts the child in a group (and session) of its own", async () => {
    const g = await shell("echo ready; exec sleep 1000");
    assert.equal(g.pgid, g.child.pid);
    const st = stat(g.child.pid!)!;
    assert.equal(st.pgid, g.child.pid, "pgid == pid");
    assert.equal(st.sid, g.child.pid, "a new session: no controlling terminal, no terminal signals");
    assert.notEqual(st.pgid, stat(process.pid)!.pgid, "not in the test runner's group");
    assert.ok(activeGroups().includes(g.pgid!));
    assert.equal(g.running, true);
    await g.stop({ graceMs: 1000 });
  });

  it("a command that does not exist resolves exited with 127, command not found", async () => {
    const g = spawnInGroup("hermit-no-such-command-xyz", [], { env });
    const status = await g.exited;
    assert.equal(status.code, 127);
    assert.match(status.reason, /command not found: hermit-no-such-command-xyz/);
    assert.equal(g.pgid, undefined);
    assert.equal(g.running, false);
    assert.deepEqual(await g.stop(), status, "stop() on a child that never started is harmless");
  });

  it("a file without the exec bit resolves exited with 126, not executable", async () => {
    const file = path.join(dir.path, "plain.sh");
    writeFileSync(file, "#!/bin/sh\necho hi\n", { mode: 0o644 });
    const status = await spawnInGroup(file, [], { env }).exited;
    assert.equal(status.code, 126);
    assert.match(status.reason, /not executable/);
  });

  it("an executable that is no program (ENOEXEC) resolves exited instead of throwing", async () => {
    const file = path.join(dir.path, "garbage");
    writeFileSync(file, "\x00\x01\x02 not a program", { mode: 0o755 });
    const g = spawnInGroup(file, [], { env });
    const output = readAll(g.child.stdout!);
    const status = await g.exited;
    // Bun and Node: ENOEXEC → 126; Deno's spawn runs it and reports exit 127
    assert.ok([126, 127].includes(status.code), `${status.code} ${status.reason}`);
    assert.equal(g.running, false);
    assert.equal(await output, "", "the output streams end");
  });

  it("a path through a file (ENOTDIR) resolves exited instead of throwing", async () => {
    const status = await spawnInGroup("/etc/passwd/x", [], { env }).exited;
    assert.equal(status.code, 126, status.reason);
  });

  it("reports the real exit status of a child that traps SIGTERM and exits 7", async () => {
    const g = await shell("trap 'exit 7' TERM; echo ready; sleep 1000 & wait");
    const status = await g.stop({ graceMs: 3000 });
    assert.equal(status.code, 7, status.reason);
    assert.equal(status.signal, undefined);
  });
});

describe("ProcessGroup.stop", { timeout: 60000 }, () => {
  it("SIGKILLs a child that ignores SIGTERM once the grace period is over", async () => {
    const g = await shell("trap '' TERM; echo ready; while :; do sleep 1; done");
    const graceMs = 800;
    const t0 = Date.now();
    const status = await g.stop({ graceMs });
    const ms = Date.now() - t0;
    assert.ok(ms >= graceMs, `stopped after ${ms} ms: the grace period was not honoured`);
    assert.equal(status.code, 137, status.reason);
    assert.equal(status.signal, "SIGKILL");
    assert.deepEqual(groupMembers(g.pgid!), []);
  });

  it("leaves none of a wrapper's grandchildren behind", async () => {
    const g = await shell("sleep 1000 & sleep 1000 & echo ready; wait");
    const kids = descendants(g.child.pid!);
    assert.equal(kids.length, 2, `two sleeps under the wrapper, got ${kids}`);
    assert.deepEqual(groupMembers(g.pgid!).sort(), [g.child.pid!, ...kids].sort());
    const status = await g.stop({ graceMs: 3000 });
    assert.equal(status.code, 143, status.reason);
    for (const pid of [g.child.pid!, ...kids]) assert.equal(alive(pid), false, `pid ${pid} survived`);
    assert.deepEqual(groupMembers(g.pgid!), []);
  });

  it("also stops what a leader that already exited left in its group", async () => {
    const g = await shell("trap '' TERM; sleep 1000 & echo ready");
    const status = await g.exited;
    assert.equal(status.code, 0);
    const left = groupMembers(g.pgid!);
    assert.equal(left.length, 1, "the background sleep outlives its parent");
    assert.ok(activeGroups().includes(g.pgid!), "a group with live members stays tracked");
    assert.equal((await g.stop({ graceMs: 300 })).code, 0, "stop() reports the leader's own status");
    assert.equal(alive(left[0]), false);
    assert.ok(!activeGroups().includes(g.pgid!));
  });

  it("drops a group by itself once what its exited leader left behind is gone", async () => {
    const events: string[] = [];
    const off = onGroupChange((kind, pgid) => events.push(`${kind} ${pgid}`));
    try {
      const g = await shell("sleep 0.3 & echo ready");
      await g.exited;
      await waitFor(() => !activeGroups().includes(g.pgid!), { what: "the emptied group to be dropped" });
      assert.ok(events.includes(`remove ${g.pgid}`), "listeners are told");
      assert.deepEqual(await g.stop({ graceMs: 300 }), g.status, "stop() afterwards signals nothing");
    } finally {
      off();
    }
  });

  it("closing stdin lets a well-behaved child (cat) exit before any signal", async () => {
    const g = spawnInGroup("cat", [], { env });
    reaper.track(g.pgid);
    g.child.stdin!.write("ping\n");
    await readUntil(g.child.stdout!, "ping");
    const status = await g.stop({ stdinMs: 5000, graceMs: 3000 });
    assert.deepEqual(status, { code: 0, reason: "exited normally" }, "cat left on EOF, before any signal");
  });

  it("stop() twice is one stop", async () => {
    const g = await shell("echo ready; exec sleep 1000");
    const a = g.stop({ graceMs: 1000 });
    const b = g.stop({ graceMs: 1000 });
    assert.equal(a, b);
    assert.equal((await a).code, 143);
  });
});

describe("stopAllGroups and onGroupChange", { timeout: 60000 }, () => {
  it("stopAllGroups stops every running group, stubborn ones included, in parallel", async () => {
    const a = await shell("echo ready; sleep 1000 & wait");
    const b = await shell("trap '' TERM; echo ready; sleep 1000 & wait");
    const c = await shell("trap '' TERM; echo ready; sleep 1000 & wait");
    const removedAt = new Map<number, number>();
    const off = onGroupChange((kind, pgid) => kind === "remove" && removedAt.set(pgid, Date.now()));
    const graceMs = 3000;
    const t0 = Date.now();
    await stopAllGroups(graceMs).finally(off);
    const ms = Date.now() - t0;
    assert.ok(ms >= graceMs, `took ${ms} ms: the stubborn groups got no grace period`);
    // one after the other, the second stubborn group would be gone a whole grace period later
    const gap = Math.abs(removedAt.get(b.pgid!)! - removedAt.get(c.pgid!)!);
    assert.ok(gap < graceMs, `the stubborn groups were gone ${gap} ms apart: not stopped in parallel`);
    for (const g of [a, b, c]) {
      assert.deepEqual(groupMembers(g.pgid!), []);
      assert.ok(!activeGroups().includes(g.pgid!));
      assert.equal(g.running, false);
    }
    assert.deepEqual([a.status?.code, b.status?.code, c.status?.code], [143, 137, 137]);
  });

  it("tells listeners when a group is about to start (before its spawn), when it starts and when it is gone", async () => {
    const events: string[] = [];
    const off = onGroupChange((kind, pgid) => events.push(`${kind} ${pgid}`));
    try {
      // gone on its own: removed as soon as the leader exits with an empty group
      const quick = spawnInGroup("true", [], { env });
      assert.deepEqual(events, ["prepare 0", `add ${quick.pgid}`]);
      await quick.exited;
      await waitFor(() => events.includes(`remove ${quick.pgid}`), { what: "remove event of 'true'" });
      // stopped: removed by stop()
      const g = await shell("echo ready; exec sleep 1000");
      assert.ok(events.includes(`add ${g.pgid}`));
      await g.stop({ graceMs: 1000 });
      assert.deepEqual(events, [
        "prepare 0",
        `add ${quick.pgid}`,
        `remove ${quick.pgid}`,
        "prepare 0",
        `add ${g.pgid}`,
        `remove ${g.pgid}`,
      ]);
      // a spawn failure is never added (only prepared for)
      await spawnInGroup("hermit-no-such-command-xyz", [], { env }).exited;
      assert.deepEqual(events.slice(6), ["prepare 0"]);
    } finally {
      off();
    }
    const after = spawnInGroup("true", [], { env });
    await after.exited;
    assert.equal(events.length, 7, "no events after unsubscribing");
  });
});
