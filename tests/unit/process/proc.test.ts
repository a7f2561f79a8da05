/**
 * `src/platform/proc.ts`, the process facts the watchdog decides on: liveness (a zombie is dead),
 * start times (pid reuse), group membership, and a signalGroup that refuses to hit init, us or
 * our own group. Linux: compares with /proc.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import process from "node:process";
import {
  aliveGroups,
  groupAlive,
  groupMembers,
  isAlive,
  processStartTime,
  readProcStat,
  signalGroup,
} from "../../../src/platform/proc.ts";
import { alive, readUntil, Reaper, stat, waitFor } from "../../helpers/procs.ts";

const reaper = new Reaper();
after(() => reaper.reap());

/** `sh -c script` in a group of its own; resolves once it printed `ready` (and whatever before). */
async function detached(script: string) {
  const child = spawn("sh", ["-c", script], { detached: true, stdio: ["ignore", "pipe", "ignore"] });
  reaper.track(child.pid);
  reaper.trackGroup(child.pid);
  const out = await readUntil(child.stdout!, "ready");
  return { child, pid: child.pid!, out };
}

describe("proc", { timeout: 30000 }, () => {
  it("reads /proc/PID/stat like the test helpers do", () => {
    const mine = readProcStat(process.pid)!;
    const ref = stat(process.pid)!;
    assert.deepEqual([mine.ppid, mine.pgid], [ref.ppid, ref.pgid]);
    assert.equal(mine.ppid, process.ppid);
    assert.equal(readProcStat(0), undefined);
  });

  it("isAlive: yes for us, no for nonsense pids and for a zombie", async () => {
    assert.equal(isAlive(process.pid), true);
    for (const pid of [0, -1, 1.5, NaN, 2 ** 31]) assert.equal(isAlive(pid), false, String(pid));
    // sh execs into sleep, which never reaps the child sh left behind: a zombie once it ends
    const { pid, out } = await detached("sleep 0.3 & echo $!; echo ready; exec sleep 1000");
    const zombie = Number(out.split("\n")[0]);
    await waitFor(() => stat(zombie)?.state === "Z", { what: `pid ${zombie} to be a zombie` });
    assert.doesNotThrow(() => process.kill(zombie, 0), "kill(pid, 0) still succeeds on a zombie");
    assert.equal(isAlive(zombie), false, "but it is not alive");
    assert.equal(isAlive(pid), true);
  });

  it("processStartTime: stable for a process, different for another, undefined when gone", async () => {
    const a = processStartTime(process.pid);
    assert.ok(a);
    assert.equal(processStartTime(process.pid), a);
    const { child, pid } = await detached("echo ready; exec sleep 1000");
    const b = processStartTime(pid);
    assert.ok(b);
    assert.notEqual(b, a);
    process.kill(pid, "SIGKILL");
    await new Promise((r) => child.once("exit", r));
    assert.equal(processStartTime(pid), undefined);
  });

  it("groupMembers, groupAlive and aliveGroups see the live members of a group", async () => {
    const g = await detached("sleep 1000 & sleep 1000 & echo ready; wait");
    const h = await detached("echo ready; exec sleep 1000");
    assert.equal(groupMembers(g.pid)!.length, 3);
    assert.deepEqual(groupMembers(h.pid), [h.pid]);
    assert.equal(groupAlive(g.pid), true);
    assert.deepEqual(aliveGroups([g.pid, h.pid, 999999999]), new Set([g.pid, h.pid]));
    process.kill(-h.pid, "SIGKILL");
    await waitFor(() => !groupAlive(h.pid), { what: "group h to be gone" });
    assert.deepEqual(aliveGroups([g.pid, h.pid]), new Set([g.pid]));
    assert.deepEqual(aliveGroups([h.pid]), new Set());
    assert.deepEqual(groupMembers(h.pid), []);
  });

  it("a group whose only member is a zombie is not alive (kill(2) would still find it)", async () => {
    // the background job makes itself a group leader and exits once its parent is sleep, which never
    // reaps it (exiting earlier raced the shell, which may reap it before its exec: a flake under load)
    const { out } = await detached(
      `setsid sh -c 'while [ "$(cat /proc/$PPID/comm)" != sleep ]; do sleep 0.02; done; exit 0' & echo $!; echo ready; exec sleep 1000`,
    );
    const zombie = Number(out.trim().split("\n")[0]);
    await waitFor(() => stat(zombie)?.state === "Z", { what: `process ${zombie} to be a zombie` });
    assert.equal(stat(zombie)!.pgid, zombie);
    process.kill(-zombie, 0); // the group still exists for kill(2)
    assert.equal(groupAlive(zombie), false);
    assert.deepEqual(aliveGroups([zombie]), new Set());
    assert.deepEqual(groupMembers(zombie), []);
  });

  it("signalGroup signals the whole group, and refuses init, us and our own group", async () => {
    const g = await detached("sleep 1000 & sleep 1000 & echo ready; wait");
    const members = groupMembers(g.pid)!;
    for (const pgid of [0, 1, -1, process.pid, stat(process.pid)!.pgid]) {
      assert.equal(signalGroup(pgid, "SIGCONT"), false, `signalGroup(${pgid}) must refuse`);
    }
    assert.equal(signalGroup(g.pid, "SIGTERM"), true);
    await waitFor(() => members.every((p) => !alive(p)), { what: "every member to be gone" });
    // once all are reaped (the leader by us, the orphans by init), not even a zombie is left
    await waitFor(() => members.every((p) => !stat(p)), { what: "every member to be reaped" });
    assert.equal(signalGroup(g.pid, "SIGTERM"), false, "nobody left to signal");
  });
});
