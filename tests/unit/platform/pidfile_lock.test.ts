/**
 * `src/platform/pidfile_lock.ts`, the lock where there is no flock (every Windows run), exercised
 * on this platform: a lock file caught between its creation and its holder being written is held,
 * a stale holder is taken over, a takeover in progress elsewhere is respected, and many processes
 * racing for the lock — holders also "dying" with it held — are never inside it at once.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { pathToFileURL } from "node:url";
import { ABANDONED_MS, takeoverMarker, tryPidfileLock } from "../../../src/platform/pidfile_lock.ts";
import { processStartTime } from "../../../src/platform/proc.ts";
import { root } from "../../helpers/hermit.ts";
import { readUntil, Reaper, waitFor } from "../../helpers/procs.ts";
import { tempDir } from "../../helpers/tmp.ts";

const reaper = new Reaper();
const dir = tempDir("hermit-pidlock-");
after(async () => {
  await reaper.reap();
  dir.cleanup();
});

/** A pid no process has (above any pid_max) and a start time no process had. */
const DEAD_HOLDER = "4294967292 1";
const me = `${process.pid} ${processStartTime(process.pid) ?? ""}`;

function makeOld(file: string): void {
  const t = (Date.now() - ABANDONED_MS - 5000) / 1000;
  utimesSync(file, t, t);
}

function subdir(name: string): string {
  const d = path.join(dir.path, name);
  mkdirSync(d);
  return d;
}

describe("pid file lock, one process", () => {
  it("takes a free lock, refuses it while held, and frees it on release", () => {
    const file = path.join(subdir("free"), "x.lock");
    const lock = tryPidfileLock(file);
    assert.ok(lock);
    assert.equal(readFileSync(file, "utf8"), me);
    assert.equal(tryPidfileLock(file), undefined, "a live holder (us) keeps it");
    lock.release();
    assert.equal(existsSync(file), false);
  });

  it("takes over a dead holder's lock and a lock whose pid was reused", () => {
    const d = subdir("stale");
    const file = path.join(d, "x.lock");
    for (const holder of [DEAD_HOLDER, `${process.pid} 1`]) {
      writeFileSync(file, holder);
      const lock = tryPidfileLock(file);
      assert.ok(lock, `taken over from '${holder}'`);
      assert.equal(readFileSync(file, "utf8"), me);
      lock.release();
    }
    assert.deepEqual(readdirSync(d), [], "no takeover marker left behind");
  });

  it("an empty lock file (created, its holder not yet written) is held until it is old", () => {
    const file = path.join(subdir("empty"), "x.lock");
    writeFileSync(file, "");
    assert.equal(tryPidfileLock(file), undefined, "a fresh empty lock file is someone's");
    makeOld(file);
    const lock = tryPidfileLock(file);
    assert.ok(lock, "an old empty lock file was left by a crash");
    lock.release();
  });

  it("leaves a stale lock alone while another process's takeover marker is fresh", () => {
    const d = subdir("marked");
    const file = path.join(d, "x.lock");
    writeFileSync(file, DEAD_HOLDER);
    const marker = takeoverMarker(file, DEAD_HOLDER);
    writeFileSync(marker, "12345 6");
    assert.equal(tryPidfileLock(file), undefined, "someone else is taking it over");
    assert.equal(readFileSync(file, "utf8"), DEAD_HOLDER);
    makeOld(marker);
    assert.equal(tryPidfileLock(file), undefined, "an abandoned marker is removed first");
    assert.equal(existsSync(marker), false);
    const lock = tryPidfileLock(file);
    assert.ok(lock, "then the stale lock is taken over");
    lock.release();
    assert.deepEqual(readdirSync(d), []);
  });
});

/**
 * Each racer takes the lock `rounds` times, logs `+pid` on entry and `-pid` on exit, and every
 * other round leaves a dead holder in the lock file instead of releasing it (as if it had died
 * holding it), so the others race to take over a stale lock as well as a free one.
 */
const RACER = `
import { appendFileSync, existsSync, writeFileSync } from "node:fs";
import process from "node:process";
import { tryPidfileLock } from ${
  JSON.stringify(pathToFileURL(path.join(root, "src/platform/pidfile_lock.ts")).href)
};
const [lockPath, logPath, goPath, rounds] = process.argv.slice(2);
const nap = (ms) => new Promise((r) => setTimeout(r, ms));
console.log("ready");
while (!existsSync(goPath)) await nap(1);
for (let i = 0; i < Number(rounds); i++) {
  let lock;
  const deadline = Date.now() + 60000;
  while (!(lock = tryPidfileLock(lockPath))) {
    if (Date.now() > deadline) process.exit(3);
    await nap(Math.random() * 2);
  }
  appendFileSync(logPath, "+" + process.pid + "\\n");
  await nap(1);
  appendFileSync(logPath, "-" + process.pid + "\\n");
  if (i % 2) writeFileSync(lockPath, ${JSON.stringify(DEAD_HOLDER)});
  else lock.release();
}
`;

function racerArgv(script: string, args: string[]): string[] {
  const deno = (globalThis as unknown as { Deno?: { execPath(): string } }).Deno;
  if (deno) return [deno.execPath(), "run", "-A", "--no-check", script, ...args];
  return [process.execPath, script, ...args];
}

describe("pid file lock, many processes", { timeout: 120_000 }, () => {
  it("is held by one process at a time through free and stale handovers", async () => {
    const d = subdir("race");
    const script = path.join(d, "racer.mjs");
    writeFileSync(script, RACER);
    const [lockPath, logPath, goPath] = ["x.lock", "log", "go"].map((f) => path.join(d, f));
    writeFileSync(logPath, "");
    const racers = 10;
    const rounds = 16;
    const exits: Promise<number | null>[] = [];
    const ready: Promise<string>[] = [];
    for (let i = 0; i < racers; i++) {
      const [cmd, ...args] = racerArgv(script, [lockPath, logPath, goPath, String(rounds)]);
      const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "inherit"] });
      reaper.track(child.pid);
      exits.push(new Promise((r) => child.once("exit", (code) => r(code))));
      ready.push(readUntil(child.stdout!, "ready", 60_000));
    }
    await Promise.all(ready);
    writeFileSync(goPath, "");
    assert.deepEqual(await Promise.all(exits), Array(racers).fill(0), "every racer got the lock every round");
    const log = readFileSync(logPath, "utf8").trim().split("\n");
    assert.equal(log.length, 2 * racers * rounds);
    for (let i = 0; i < log.length; i += 2) {
      const [enter, leave] = [log[i], log[i + 1]];
      assert.ok(
        enter.startsWith("+") && leave === `-${enter.slice(1)}`,
        `two holders at once at line ${i + 1}: ${log.slice(Math.max(0, i - 2), i + 4).join(" ")}`,
      );
    }
    await waitFor(() => readdirSync(d).every((f) => !f.includes(".takeover-")), {
      what: "no takeover marker left behind",
    });
  });
});
