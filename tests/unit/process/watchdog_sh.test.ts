/**
 * The sh watchdog (`src/process/watchdog_sh.ts`) with real processes, under every POSIX shell this
 * machine has that hermit may meet as /bin/sh (dash: Debian's; bash: macOS's is bash; busybox:
 * Alpine's): the same rules as `hermit watchdog --supervise` (registered groups are reaped on EOF,
 * TERM-proof ones after the grace; unregistered ones and junk are left alone; nothing registered
 * ends silently), plus the sh-only ones (a closed stderr does not stop the reaping, a signal just
 * ends it). Linux: inspects /proc.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { symlinkSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { shWatchdogArgv } from "../../../src/process/watchdog_sh.ts";
import { alive, groupMembers, Reaper, sleepingGroup, waitFor } from "../../helpers/procs.ts";
import { findTool, requirements } from "../../helpers/rootfs.ts";
import { tempDir } from "../../helpers/tmp.ts";

const reaper = new Reaper();
const dir = tempDir("hermit-watchdog-sh-");
after(async () => {
  await reaper.reap();
  dir.cleanup();
});

/** For a loaded machine. */
const SLACK_MS = 2000;

/** A group of its own that the test owns, optionally TERM-proof. */
const group = (ignoreTerm = false) => sleepingGroup(reaper, ignoreTerm);

const gone = (pgid: number, timeoutMs: number) =>
  waitFor(() => groupMembers(pgid).length === 0, { timeoutMs, what: `group ${pgid} to be gone` });

/** The watchdog under `shell`, started as hermit starts it (own session, pipe on stdin). */
function watchdog(
  shell: string,
  opts: { graceMs?: number; level?: "debug" | "warn"; stderr?: "pipe" | "ignore" },
) {
  const argv = shWatchdogArgv(shell, process.pid, opts.graceMs ?? 1000, opts.level ?? "debug");
  const child = spawn(argv[0], argv.slice(1), {
    detached: true,
    stdio: ["pipe", "ignore", opts.stderr ?? "pipe"],
  });
  reaper.track(child.pid);
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (d) => (stderr += d));
  const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return {
    child,
    exit,
    stderr: () => stderr,
    send: (line: string) => child.stdin!.write(line + "\n"),
    watching: (pgid: number) =>
      waitFor(() => stderr.includes(`watchdog: watching group ${pgid}\n`), {
        timeoutMs: 10000,
        what: () => `the watchdog to watch group ${pgid}; stderr: ${stderr}`,
      }),
  };
}

/** busybox runs the applet its argv[0] names: a symlink called sh makes it the shell. */
function busyboxSh(): string | undefined {
  const busybox = findTool("busybox");
  if (!busybox) return undefined;
  const link = path.join(dir.path, "sh");
  symlinkSync(busybox, link);
  return link;
}

const shells: { name: string; path: string | undefined; fix: string }[] = [
  { name: "/bin/sh", path: findTool("sh", ["/bin"]), fix: "a POSIX system has /bin/sh" },
  { name: "dash", path: findTool("dash"), fix: "apt-get install -y dash" },
  { name: "bash", path: findTool("bash"), fix: "apt-get install -y bash" },
  { name: "busybox sh", path: busyboxSh(), fix: "apt-get install -y busybox-static" },
];

for (const shell of shells) {
  const req = requirements([{ what: shell.name, ok: !!shell.path, fix: shell.fix }]);
  describe(`the sh watchdog under ${shell.name}`, { skip: req.skip, timeout: 60000 }, () => {
    it("reaps every registered group on EOF, stubborn ones after the grace; ignores junk", async () => {
      req.assertReady();
      const a = await group();
      const b = await group(true);
      const w = watchdog(shell.path!, { graceMs: 1000 });
      w.send(`register ${a}`);
      w.send(`register ${b}`);
      for (const junk of ["hello", "register", "register abc", "register 0", "register 1", "register -5"]) {
        w.send(junk);
      }
      w.send("register 007"); // leading zeros: not an id as hermit writes them
      w.send("unregister 424242");
      w.send(`register ${w.child.pid}`); // its own group: never taken
      w.send(`register ${process.pid}`); // its parent: never taken
      w.send("x".repeat(10000));
      w.send(`register ${a}`); // twice is once
      await w.watching(a);
      await w.watching(b);
      assert.equal(w.stderr().match(new RegExp(`watching group ${a}\\n`, "g"))?.length, 1, w.stderr());
      for (const never of [w.child.pid, process.pid, 0, 1, 7]) {
        assert.ok(!w.stderr().includes(`watching group ${never}\n`), w.stderr());
      }
      assert.equal(groupMembers(a).length, 3, "nothing is stopped while stdin is open");
      const t0 = Date.now();
      w.child.stdin!.end();
      await gone(a, 1000 + SLACK_MS);
      await gone(b, 1000 + SLACK_MS);
      assert.ok(Date.now() - t0 >= 900, "the TERM-proof group was given its grace period");
      assert.equal(await w.exit, 0, w.stderr());
      assert.match(
        w.stderr(),
        /hermit: warn: watchdog: parent \d+ closed the pipe; stopping 2 process group\(s\)/,
      );
    });

    it("an unregistered group, or one that ended, is never signalled", async () => {
      req.assertReady();
      const a = await group();
      const b = await group();
      const w = watchdog(shell.path!, { level: "warn" });
      w.send(`register ${a}`);
      w.send(`register ${b}`);
      w.send(`unregister ${a}`);
      w.child.stdin!.end();
      await gone(b, 1000 + SLACK_MS);
      assert.equal(await w.exit, 0, w.stderr());
      assert.equal(groupMembers(a).length, 3, "the unregistered group is still running");
      assert.match(w.stderr(), /stopping 1 process group\(s\)/);
    });

    it("on EOF, also stops the groups whose processes carry its tag, and no other", async () => {
      req.assertReady();
      const tag = `${process.pid}-0badc0de`;
      const tagged = await sleepingGroup(reaper, true, { HERMIT_GROUP_TAG: `${tag}.7` });
      const others = [
        await sleepingGroup(reaper, false, { HERMIT_GROUP_TAG: `${tag}0.7` }), // another prefix
        await sleepingGroup(reaper, false, { HERMIT_GROUP_TAG: `1-0badc0de.7` }),
        await sleepingGroup(reaper, false, { NOT_THE_TAG: `HERMIT_GROUP_TAG=${tag}.7` }),
        await group(),
      ];
      const argv = shWatchdogArgv(shell.path!, process.pid, 1000, "debug", tag);
      const w = spawn(argv[0], argv.slice(1), { detached: true, stdio: ["pipe", "ignore", "pipe"] });
      reaper.track(w.pid);
      let stderr = "";
      w.stderr!.setEncoding("utf8").on("data", (d) => (stderr += d));
      w.stdin!.end(); // nothing registered: hermit was killed before it could register anything
      await gone(tagged, 1000 + SLACK_MS); // TERM-proof: SIGKILLed after the grace
      assert.match(stderr, new RegExp(`group ${tagged} carries its tag`));
      for (const g of others) assert.equal(groupMembers(g).length, 3, `group ${g} was signalled: ${stderr}`);
    });

    it("with nothing registered, EOF just ends it, silently", async () => {
      req.assertReady();
      const w = watchdog(shell.path!, { level: "warn" });
      w.child.stdin!.end();
      assert.equal(await w.exit, 0);
      assert.equal(w.stderr(), "");
    });

    it("still reaps when nobody reads its stderr any more", async () => {
      req.assertReady();
      const a = await group();
      const w = watchdog(shell.path!, { level: "debug" });
      w.send(`register ${a}`);
      await w.watching(a);
      w.child.stderr!.destroy(); // the host is gone: writing the warning gets EPIPE, not SIGPIPE
      w.child.stdin!.end();
      await gone(a, 1000 + SLACK_MS);
      assert.equal(await w.exit, 0);
    });

    it("a signal ends it without touching the groups (hermit starts a new one)", async () => {
      req.assertReady();
      const a = await group();
      const w = watchdog(shell.path!, { level: "debug" });
      w.send(`register ${a}`);
      await w.watching(a);
      process.kill(w.child.pid!, "SIGTERM");
      await waitFor(() => !alive(w.child.pid!), { timeoutMs: 5000, what: "the watchdog to end" });
      assert.equal(groupMembers(a).length, 3);
    });
  });
}
