/**
 * `hermit watchdog --ppid N -- CMD…` end to end, in every flavor (compiled binary, sources under
 * Deno and under Bun): the kill -9 test (the parent dies outright; the command's whole group,
 * SIGTERM-ignoring members included, is gone within grace + poll interval), exit status
 * propagation, signals to the watchdog, and usage errors. `--supervise` is in
 * `watchdog_supervise.test.ts`. Linux: inspects /proc.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { type Flavor, flavors, hermitArgv, runHermit } from "../helpers/hermit.ts";
import { alive, groupMembers, Reaper, stat, waitFor } from "../helpers/procs.ts";
import { tempDir } from "../helpers/tmp.ts";

const reaper = new Reaper();
const dir = tempDir("hermit-watchdog-");
after(async () => {
  await reaper.reap();
  dir.cleanup();
});

/** Quote for sh. */
const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** The defaults: 3 s from SIGTERM to SIGKILL, the parent checked every 2 s. */
const GRACE_MS = 3000;
const POLL_MS = 2000;
/** For a loaded machine. */
const SLACK_MS = 2000;

let serial = 0;
const pidfile = (flavor: Flavor) => path.join(dir.path, `group-${flavor}-${++serial}`);
/** The group id the command wrote; `stderr` explains a watchdog that never got that far. */
async function readPid(file: string, stderr: () => string): Promise<number> {
  try {
    return await waitFor(() => Number(readFileSync(file, "utf8").trim()) || undefined, {
      timeoutMs: 20000,
      what: `a pid in ${file}`,
    });
  } catch (err) {
    throw new Error(`${(err as Error).message}\nwatchdog stderr: ${stderr()}`);
  }
}

/** Tests compare stderr: whatever HERMIT_LOG the run has, the watchdog logs at the default. */
const env = { ...process.env, HERMIT_LOG: "info" };

/** Start a process, collecting stderr; tracked for cleanup. */
function start(cmd: string[]) {
  const child = spawn(cmd[0], cmd.slice(1), { stdio: ["ignore", "ignore", "pipe"], env });
  reaper.track(child.pid);
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (d) => (stderr += d));
  const exit = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal }))
  );
  return { child, exit, stderr: () => stderr };
}

/**
 * The command every test runs: record the group id, optionally ignore SIGTERM (so the grace
 * period must run out), then two grandchildren under a waiting sh -c wrapper.
 */
function groupScript(file: string, ignoreTerm: boolean): string {
  return `echo $$ > ${q(file)}; ${ignoreTerm ? `trap '' TERM; ` : ""}sleep 1000 & sleep 1000 & wait`;
}

/** Wait until the group is the wrapper and its two sleeps (so any trap is set). */
async function fullGroup(pgid: number): Promise<number[]> {
  reaper.trackGroup(pgid);
  return await waitFor(() => {
    const m = groupMembers(pgid);
    return m.length === 3 ? m : undefined;
  }, { timeoutMs: 10000, what: `three processes in group ${pgid}` });
}

async function gone(pgid: number, timeoutMs: number): Promise<void> {
  await waitFor(() => groupMembers(pgid).length === 0, { timeoutMs, what: `group ${pgid} to be gone` });
}

for (const flavor of flavors()) {
  const hermit = hermitArgv(flavor);
  const watchdog = (...args: string[]) => [...hermit, "watchdog", ...args];

  describe(`watchdog (${flavor})`, { timeout: 120000 }, () => {
    it("kill -9 of the parent: the whole group is gone within grace + poll, the watchdog exits", async () => {
      const file = pidfile(flavor);
      // hermit's argv goes in as "$@": Deno's child_process rewrites an sh -c script that names
      // the deno executable, and "$$" then reaches deno unexpanded.
      const script = `inner=$1; shift; "$@" watchdog --ppid $$ -- sh -c "$inner" & wait`;
      const parent = start(["sh", "-c", script, "sh", groupScript(file, true), ...hermit]);
      const pgid = await readPid(file, parent.stderr);
      const members = await fullGroup(pgid);
      const wdPid = stat(pgid)!.ppid;
      reaper.track(wdPid);
      assert.equal(stat(wdPid)?.ppid, parent.child.pid, "the watchdog is the parent's child");
      assert.notEqual(stat(wdPid)?.pgid, pgid, "the watchdog is outside the group it watches");

      const t0 = Date.now();
      process.kill(parent.child.pid!, "SIGKILL");
      await gone(pgid, GRACE_MS + POLL_MS + SLACK_MS);
      const ms = Date.now() - t0;
      console.log(`watchdog (${flavor}): group gone ${ms} ms after kill -9 of the parent`);
      assert.ok(ms >= GRACE_MS, `gone after ${ms} ms: SIGTERM is ignored, so only SIGKILL can have done it`);
      for (const pid of members) assert.equal(alive(pid), false, `pid ${pid} survived`);
      await waitFor(() => !alive(wdPid), { timeoutMs: SLACK_MS + 1000, what: "the watchdog to exit" });
      await waitFor(() => parent.stderr().includes(`parent ${parent.child.pid} is gone`), {
        timeoutMs: 2000,
        what: `the watchdog's reason on stderr, got: ${parent.stderr()}`,
      });
    });

    it("exits with the command's status; passes stdio through", async () => {
      const me = String(process.pid);
      const r = await runHermit(["watchdog", "--ppid", me, "--", "sh", "-c", "cat; echo err >&2; exit 7"], {
        flavor,
        env,
        input: "hello\n",
      });
      assert.deepEqual([r.code, r.stdout, r.stderr], [7, "hello\n", "err\n"]);
      const killed = await runHermit(["watchdog", "--ppid", me, "--", "sh", "-c", "kill -TERM $$"], {
        flavor,
        env,
      });
      assert.equal(killed.code, 143, "128 + SIGTERM");
      const ok = await runHermit(["watchdog", "--ppid", me, "--grace", "1", "--poll", "0.5", "--", "true"], {
        flavor,
        env,
      });
      assert.deepEqual([ok.code, ok.stderr], [0, ""]);
    });

    it("what the command leaves running in its group is stopped when it exits", async () => {
      const r = await runHermit(
        [
          "watchdog",
          "--ppid",
          String(process.pid),
          "--grace",
          "1",
          "--",
          "sh",
          "-c",
          "sleep 1000 & echo $!; exit 3",
        ],
        { flavor, env },
      );
      const orphan = Number(r.stdout.trim());
      reaper.track(orphan);
      assert.equal(r.code, 3, r.stderr);
      await waitFor(() => !alive(orphan), {
        timeoutMs: SLACK_MS,
        what: `the left-behind sleep ${orphan} to be gone`,
      });
    });

    it("a missing command exits 127 with a clear message", async () => {
      const r = await runHermit(["watchdog", "--ppid", String(process.pid), "--", "hermit-no-such-cmd"], {
        flavor,
        env,
      });
      assert.equal(r.code, 127);
      assert.match(r.stderr, /command not found: hermit-no-such-cmd/);
      assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
    });

    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      it(`${signal} to the watchdog stops the group and the watchdog (143 from the command)`, async () => {
        const file = pidfile(flavor);
        const wd = start(watchdog("--ppid", String(process.pid), "--", "sh", "-c", groupScript(file, false)));
        const pgid = await readPid(file, wd.stderr);
        const members = await fullGroup(pgid);
        process.kill(wd.child.pid!, signal);
        await gone(pgid, 1000 + SLACK_MS);
        assert.deepEqual(await wd.exit, { code: 143, signal: null }, wd.stderr());
        for (const pid of members) assert.equal(alive(pid), false);
        assert.match(wd.stderr(), new RegExp(`received ${signal}; stopping 1 process group`));
      });
    }

    it("SIGHUP too; a command ignoring SIGTERM is SIGKILLed after --grace (137)", async () => {
      const file = pidfile(flavor);
      const wd = start(
        watchdog("--ppid", String(process.pid), "--grace", "1", "--", "sh", "-c", groupScript(file, true)),
      );
      const pgid = await readPid(file, wd.stderr);
      await fullGroup(pgid);
      const t0 = Date.now();
      process.kill(wd.child.pid!, "SIGHUP");
      await gone(pgid, 1000 + SLACK_MS);
      assert.ok(Date.now() - t0 >= 1000, "the grace period was honoured");
      assert.deepEqual(await wd.exit, { code: 137, signal: null });
    });

    it("--ppid of a process that is not its parent: reaps when that process dies", async () => {
      const other = start(["sleep", "1000"]);
      const file = pidfile(flavor);
      const wd = start(
        watchdog(
          "--ppid",
          String(other.child.pid),
          "--poll",
          "0.2",
          "--grace",
          "1",
          "--",
          "sh",
          "-c",
          groupScript(file, false),
        ),
      );
      const pgid = await readPid(file, wd.stderr);
      await fullGroup(pgid);
      process.kill(other.child.pid!, "SIGKILL");
      await gone(pgid, 200 + SLACK_MS);
      assert.deepEqual(await wd.exit, { code: 143, signal: null });
      assert.match(wd.stderr(), new RegExp(`parent ${other.child.pid} is gone; stopping 1 process group`));
    });

    it("a watchdog whose --ppid is already dead stops the command at once", async () => {
      const dead = start(["true"]);
      await dead.exit;
      await waitFor(() => !alive(dead.child.pid!), { what: "pid to be gone" });
      const r = await runHermit(["watchdog", "--ppid", String(dead.child.pid), "--", "sleep", "1000"], {
        flavor,
        env,
        timeoutMs: 20000,
      });
      assert.equal(r.code, 143);
      assert.match(r.stderr, /is gone/);
    });

    it("usage errors exit 2 with one error: line", async () => {
      const cases = [
        ["watchdog", "--", "true"],
        ["watchdog", "--ppid", "123"],
        ["watchdog", "--ppid", "abc", "--", "true"],
        ["watchdog", "--ppid", "0", "--", "true"],
        ["watchdog", "--ppid", "123", "--grace", "soon", "--", "true"],
        ["watchdog", "--ppid", "123", "--supervise", "--", "true"],
      ];
      const results = await Promise.all(cases.map((args) => runHermit(args, { flavor, env })));
      results.forEach((r, i) => {
        const what = `hermit ${cases[i].join(" ")}: ${r.stderr}`;
        assert.equal(r.code, 2, what);
        assert.equal(r.stdout, "", what);
        assert.match(r.stderr, /^error: [^\n]+\n$/, what);
      });
    });
  });
}
