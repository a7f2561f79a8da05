/**
 * `hermit watchdog --ppid N --supervise` end to end, in every flavor: the groups registered on
 * stdin (`register <pgid>` / `unregister <pgid>`) are reaped when stdin hits EOF or the parent
 * dies, and only those. This is what `hermit serve` relies on when it is killed outright.
 * Linux: inspects /proc.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { flavors, hermitArgv } from "../helpers/hermit.ts";
import {
  alive,
  cmdline,
  descendants,
  groupMembers,
  Reaper,
  sleepingGroup,
  waitFor,
} from "../helpers/procs.ts";
import { tempDir } from "../helpers/tmp.ts";

const reaper = new Reaper();
const dir = tempDir("hermit-supervise-");
after(async () => {
  await reaper.reap();
  dir.cleanup();
});

/** For a loaded machine. */
const SLACK_MS = 2000;

/** A group of its own that the test owns, optionally TERM-proof. */
const group = (ignoreTerm = false) => sleepingGroup(reaper, ignoreTerm);

/** With debug logging the supervisor says which groups it watches (so tests need not guess). */
const debugEnv = { ...process.env, HERMIT_LOG: "debug" };
const infoEnv = { ...process.env, HERMIT_LOG: "info" };

/** Start `argv` with a pipe on stdin, collecting stderr; `argv` may wrap the supervisor. */
function supervisor(argv: string[], env: NodeJS.ProcessEnv = infoEnv) {
  const child = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "ignore", "pipe"], env });
  reaper.track(child.pid);
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (d) => (stderr += d));
  const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const send = (line: string) => child.stdin!.write(line + "\n");
  /** Wait until the (debug-logging) supervisor has taken group `pgid`. */
  const watching = (pgid: number) =>
    waitFor(() => stderr.includes(`watching group ${pgid}\n`), {
      timeoutMs: 20000,
      what: `the supervisor to watch group ${pgid}; stderr: ${stderr}`,
    });
  return { child, exit, stderr: () => stderr, send, watching };
}

const gone = (pgid: number, timeoutMs: number) =>
  waitFor(() => groupMembers(pgid).length === 0, { timeoutMs, what: `group ${pgid} to be gone` });

for (const flavor of flavors()) {
  const hermit = hermitArgv(flavor);
  const supervise = (...extra: string[]) => [
    ...hermit,
    "watchdog",
    "--ppid",
    String(process.pid),
    "--supervise",
    ...extra,
  ];

  describe(`watchdog --supervise (${flavor})`, { timeout: 120000 }, () => {
    it("reaps every registered group when stdin closes, stubborn ones after the grace", async () => {
      const a = await group();
      const b = await group(true);
      const w = supervisor(supervise("--grace", "1"), debugEnv);
      w.send(`register ${a}`);
      w.send(`register ${b}`);
      // noise and dangerous ids are ignored, not fatal
      for (const junk of ["hello", "register", "register abc", "register 0", "register 1", "register -5"]) {
        w.send(junk);
      }
      w.send("unregister 424242");
      w.send(`register ${w.child.pid}`); // its own group: never taken
      w.send("x".repeat(10000));
      w.send(`register ${a}`); // twice is once
      await w.watching(a);
      await w.watching(b);
      assert.ok(!w.stderr().includes(`watching group ${w.child.pid}\n`), w.stderr());
      assert.ok(!/watching group (0|1)\n/.test(w.stderr()), w.stderr());
      // nothing is stopped while the parent lives and stdin is open
      assert.equal(groupMembers(a).length, 3);
      assert.equal(groupMembers(b).length, 3);
      const t0 = Date.now();
      w.child.stdin!.end();
      await gone(a, 1000 + SLACK_MS);
      await gone(b, 1000 + SLACK_MS);
      assert.ok(Date.now() - t0 >= 1000, "the TERM-proof group was given its grace period");
      assert.equal(await w.exit, 0, w.stderr());
      assert.match(w.stderr(), /closed the pipe; stopping 2 process group/);
    });

    it("an unregistered group is left alone", async () => {
      const a = await group();
      const b = await group();
      const w = supervisor(supervise("--grace", "1"));
      w.send(`register ${a}`);
      w.send(`register ${b}`);
      w.send(`unregister ${a}`);
      w.child.stdin!.end();
      await gone(b, 1000 + SLACK_MS);
      assert.equal(await w.exit, 0, w.stderr());
      assert.equal(groupMembers(a).length, 3, "the unregistered group is still running");
    });

    it("--tag: on EOF, also stops the groups whose processes carry hermit's tag, and no other", async () => {
      const tag = `${process.pid}-0badc0de`;
      const tagged = await sleepingGroup(reaper, true, { HERMIT_GROUP_TAG: `${tag}.3` });
      const others = [
        await sleepingGroup(reaper, false, { HERMIT_GROUP_TAG: `${tag}0.3` }),
        await sleepingGroup(reaper, false, { NOT_THE_TAG: `HERMIT_GROUP_TAG=${tag}.3` }),
        await group(),
      ];
      const w = supervisor(supervise("--grace", "1", "--tag", tag), debugEnv);
      w.child.stdin!.end();
      await gone(tagged, 1000 + SLACK_MS);
      assert.equal(await w.exit, 0, w.stderr());
      assert.match(w.stderr(), new RegExp(`group ${tagged} carries its tag`));
      for (const g of others) {
        assert.equal(groupMembers(g).length, 3, `group ${g} was signalled: ${w.stderr()}`);
      }
    });

    it("with nothing registered, EOF just ends it", async () => {
      const w = supervisor(supervise());
      w.child.stdin!.end();
      assert.equal(await w.exit, 0);
      assert.equal(w.stderr(), "");
    });

    it("reaps the registered groups when the parent dies, even with stdin still open", async () => {
      const a = await group();
      // P (sh) runs `tail -f FILE | supervisor`: tail outlives P, so P's death does not close the
      // supervisor's stdin and only the parent poll can notice it. (hermit's argv goes in as "$@":
      // Deno's child_process rewrites an sh -c script that names deno.)
      const feed = path.join(dir.path, `feed-${flavor}`);
      writeFileSync(feed, `register ${a}\n`);
      const script = `tail -n +1 -f "$0" | "$@" watchdog --ppid $$ --supervise --poll 0.2 --grace 1 & wait`;
      const p = supervisor(["sh", "-c", script, feed, ...hermit], debugEnv);
      await p.watching(a);
      const under = descendants(p.child.pid!);
      under.forEach((pid) => reaper.track(pid));
      const wdPid = under.find((pid) => cmdline(pid).includes("--supervise"));
      assert.ok(wdPid, `no supervisor among ${under.map(cmdline)}`);
      process.kill(p.child.pid!, "SIGKILL");
      await gone(a, 200 + 1000 + SLACK_MS);
      await waitFor(() => !alive(wdPid), { timeoutMs: SLACK_MS, what: "the supervisor to exit" });
      assert.match(p.stderr(), /parent \d+ is gone; stopping 1 process group/);
    });
  });
}
