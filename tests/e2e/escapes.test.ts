/**
 * Daemons a command tool starts with `setsid` (a group and session of their own) do not outlive
 * what started them: gone after the tool's timeout, after a cancel, when the tool ends, when serve
 * exits, and when serve is killed outright (the watchdog was told about the daemon's group). Each case first
 * proves the daemon runs (it writes its pid, and /proc shows `sleep 1000` under it). Both
 * watchdogs keep the promise: the sh one serve starts by default, and hermit's own
 * (HERMIT_WATCHDOG=hermit, as where no sh exists). Linux: inspects /proc.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import process from "node:process";
import path from "node:path";
import { hermitBin, hermitEnv } from "../helpers/hermit.ts";
import { alive, allProcesses, cmdline, kill, Reaper, waitFor } from "../helpers/procs.ts";
import { tempDir } from "../helpers/tmp.ts";

/** The default grace (3 s) plus room for a loaded machine. */
const GONE_WITHIN_MS = 3000 + 5000;

/** A daemon (its own session) that writes its pid to daemon.pid in the tool's cwd, then sleeps. */
const DAEMON = "setsid sh -c 'echo $$ > daemon.pid.tmp && mv daemon.pid.tmp daemon.pid; exec sleep 1000' &";

/**
 * A daemon that answers SIGTERM by starting itself again in a new session and exiting (each one
 * appends its pid to `hops` in the cwd): only a stop that keeps looking while it waits finds them.
 */
const HOPPER = `trap 'setsid sh "$0" </dev/null >/dev/null 2>&1 & exit 0' TERM
echo $$ >> hops
sleep 1000 & wait
`;

/** An adapter of its own per test (its directory is the tools' cwd, where daemon.pid goes). */
function adapter(dir: string): string {
  mkdirSync(dir);
  writeFileSync(path.join(dir, "hop.sh"), HOPPER);
  // the tool goes on once the daemon has its trap (a SIGTERM before it would simply end it)
  const hop = `setsid sh ${path.join(dir, "hop.sh")} </dev/null >/dev/null 2>&1 & ` +
    "while [ ! -s hops ]; do sleep 0.1; done;";
  writeFileSync(
    path.join(dir, "hermit.yaml"),
    `name: escapes
exports:
  tools: [linger, stay, leave, fork_leave, hop, hop_stay]
tools:
  linger:
    description: starts a daemon, then keeps running past its timeout
    input: { type: object }
    run: [sh, -c, "${DAEMON} sleep 60"]
    timeout: 3
  stay:
    description: starts a daemon, then keeps running (a timeout no test waits for)
    input: { type: object }
    run: [sh, -c, "${DAEMON} sleep 60"]
    timeout: 60
  leave:
    description: starts a daemon and ends
    input: { type: object }
    run: [sh, -c, "${DAEMON} exit 0"]
    timeout: 30
  fork_leave:
    description: starts a daemon through a shell that exits at once (a double fork), runs on, ends
    input: { type: object }
    run: [sh, -c, "sh -c \\"${DAEMON.replaceAll("$", "\\\\$")}\\"; sleep 3"]
    timeout: 30
  hop:
    description: starts a daemon that hops to a new session on SIGTERM, and ends
    input: { type: object }
    run: [sh, -c, "${hop} exit 0"]
    timeout: 30
  hop_stay:
    description: starts a daemon that hops to a new session on SIGTERM, then keeps running
    input: { type: object }
    run: [sh, -c, "${hop} sleep 60"]
    timeout: 60
`,
  );
  return dir;
}

interface Serve {
  pid: number;
  call(tool: string): { id: number; result: Promise<Record<string, unknown>> };
  send(message: unknown): void;
  stderr(): string;
  end(): void;
  exit: Promise<number | null>;
}

function serve(dir: string, reaper: Reaper, env: Record<string, string> = {}): Serve {
  const child = spawn(hermitBin(), ["serve", dir], {
    cwd: dir,
    env: hermitEnv({ ...process.env, HERMIT_LOG: "debug", ...env }) as Record<string, string>,
    stdio: ["pipe", "pipe", "pipe"],
  });
  reaper.track(child.pid);
  let out = "";
  let err = "";
  const waiting = new Map<number, (m: Record<string, unknown>) => void>();
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    out += d;
    const lines = out.split("\n");
    out = lines.pop()!;
    for (const line of lines) {
      const m = JSON.parse(line);
      waiting.get(m.id)?.(m);
    }
  });
  child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
  const send = (m: unknown) => child.stdin.write(JSON.stringify(m) + "\n");
  let id = 0;
  const request = (method: string, params: unknown) => {
    const n = ++id;
    const result = new Promise<Record<string, unknown>>((resolve) => waiting.set(n, resolve));
    send({ jsonrpc: "2.0", id: n, method, params });
    return { id: n, result };
  };
  request("initialize", {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "escapes", version: "0" },
  });
  send({ jsonrpc: "2.0", method: "notifications/initialized" });
  return {
    pid: child.pid!,
    call: (tool) => request("tools/call", { name: tool, arguments: {} }),
    send,
    stderr: () => err,
    end: () => child.stdin.end(),
    exit: new Promise((resolve) => child.on("exit", (code) => resolve(code))),
  };
}

/** The daemon's pid once it runs `sleep 1000` (the proof it started). */
async function daemonStarted(dir: string, s: Serve, reaper: Reaper): Promise<number> {
  const file = path.join(dir, "daemon.pid");
  const pid = await waitFor(() => Number(readFileSync(file, "utf8").trim()) || undefined, {
    timeoutMs: 30_000,
    what: () => `the daemon's pid in ${file} (stderr: ${s.stderr()})`,
  });
  reaper.track(pid);
  await waitFor(() => alive(pid) && cmdline(pid) === "sleep 1000", {
    timeoutMs: 5000,
    what: `the daemon ${pid} to run sleep 1000 (it runs '${cmdline(pid)}')`,
  });
  return pid;
}

const gone = (pid: number, why: string) =>
  waitFor(() => !alive(pid), { timeoutMs: GONE_WITHIN_MS, what: `the daemon ${pid} to be gone ${why}` });

/** The pids the hopping daemon has had so far (each tracked for the reaper). */
function hops(dir: string, reaper: Reaper): number[] {
  let text = "";
  try {
    text = readFileSync(path.join(dir, "hops"), "utf8");
  } catch { /* none yet */ }
  const pids = text.split("\n").filter(Boolean).map(Number);
  pids.forEach((p) => reaper.track(p));
  return pids;
}

/** The hopping daemon started, then every pid it hopped to is gone (and it hops no more). */
async function hopperStopped(dir: string, s: Serve, reaper: Reaper, why: string): Promise<void> {
  await waitFor(() => hops(dir, reaper).every((p) => !alive(p)), {
    timeoutMs: GONE_WITHIN_MS,
    what: () =>
      `every pid of the hopping daemon (${hops(dir, reaper)}) to be gone ${why} (${s.stderr().slice(-1500)})`,
  });
  const seen = hops(dir, reaper).length;
  await new Promise((r) => setTimeout(r, 1500));
  const now = hops(dir, reaper);
  assert.equal(now.length, seen, `it hopped again ${why}: ${now}`);
  assert.ok(now.every((p) => !alive(p)), `a pid of the hopping daemon outlived its stop ${why}: ${now}`);
}

function watchdogOf(hermit: number): number | undefined {
  return allProcesses().find((p) => cmdline(p.pid).includes(`watchdog --ppid ${hermit} --supervise`))?.pid;
}

describe("setsid daemons of command tools", { timeout: 120_000 }, () => {
  const tmp = tempDir("hermit-escapes-");
  const reaper = new Reaper();
  const dirOf = (name: string) => adapter(path.join(tmp.path, name));
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  it("are stopped with the tool when it times out", async () => {
    const dir = dirOf("timeout");
    const s = serve(dir, reaper);
    const call = s.call("linger");
    const pid = await daemonStarted(dir, s, reaper);
    const r = await call.result;
    assert.match(JSON.stringify(r.result), /timed out after 3 s/);
    await gone(pid, "after the timeout");
    s.end();
    assert.equal(await s.exit, 0, s.stderr());
  });

  it("are stopped with the tool when the call is cancelled", async () => {
    const dir = dirOf("cancel");
    const s = serve(dir, reaper);
    const call = s.call("stay");
    const pid = await daemonStarted(dir, s, reaper);
    s.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: call.id } });
    await gone(pid, "after the cancel");
    s.end();
    assert.equal(await s.exit, 0, s.stderr());
  });

  it("left by a tool that ended are stopped with it (orphaned as the tool ended: counted as its own)", async () => {
    const dir = dirOf("exit");
    const s = serve(dir, reaper);
    const r = await s.call("leave").result;
    assert.equal((r.result as { isError?: boolean }).isError, undefined, JSON.stringify(r));
    // it did start (it wrote its pid), and it is gone with the tool while serve goes on
    const file = path.join(dir, "daemon.pid");
    const pid = await waitFor(() => Number(readFileSync(file, "utf8").trim()) || undefined, {
      timeoutMs: 30_000,
      what: () => `the daemon's pid in ${file} (stderr: ${s.stderr()})`,
    });
    reaper.track(pid);
    await gone(pid, "after the tool ended");
    assert.equal(alive(s.pid), true, "serve goes on");
    s.end();
    assert.equal(await s.exit, 0, s.stderr());
  });

  it("orphaned at once (a double fork) are stopped when the tool ends seconds later", async () => {
    const dir = dirOf("fork-exit");
    const s = serve(dir, reaper);
    const call = s.call("fork_leave");
    const pid = await daemonStarted(dir, s, reaper);
    const r = await call.result;
    assert.equal((r.result as { isError?: boolean }).isError, undefined, JSON.stringify(r));
    await gone(pid, "after the tool ended");
    assert.equal(alive(s.pid), true, "serve goes on");
    s.end();
    assert.equal(await s.exit, 0, s.stderr());
  });

  it("left by a tool that runs when serve exits are stopped with it", async () => {
    const dir = dirOf("exit-running");
    const s = serve(dir, reaper);
    void s.call("stay");
    const pid = await daemonStarted(dir, s, reaper);
    s.end();
    assert.equal(await s.exit, 0, s.stderr());
    assert.ok(!alive(pid), `the daemon ${pid} outlived serve`);
  });

  it("that answer SIGTERM with a new setsid child are followed when the tool that left them ends", async () => {
    const dir = dirOf("hop-exit");
    const s = serve(dir, reaper);
    await s.call("hop").result;
    await waitFor(() => hops(dir, reaper).length > 0, {
      timeoutMs: 30_000,
      what: "the hopping daemon to start",
    });
    await hopperStopped(dir, s, reaper, "after the tool ended");
    assert.equal(alive(s.pid), true, "serve goes on");
    s.end();
    assert.equal(await s.exit, 0, s.stderr());
  });

  it("that answer SIGTERM with a new setsid child are followed when serve exits", async () => {
    const dir = dirOf("hop-serve-exit");
    const s = serve(dir, reaper);
    void s.call("hop_stay");
    await waitFor(() => hops(dir, reaper).length > 0, {
      timeoutMs: 30_000,
      what: "the hopping daemon to start",
    });
    s.end();
    assert.equal(await s.exit, 0, s.stderr());
    await hopperStopped(dir, s, reaper, "after serve exited");
  });

  for (const watchdog of ["sh", "hermit"] as const) {
    it(`are taken by the watchdog (${watchdog}) when serve is killed outright`, async () => {
      const dir = dirOf(`kill-${watchdog}`);
      const s = serve(dir, reaper, watchdog === "hermit" ? { HERMIT_WATCHDOG: "hermit" } : {});
      void s.call("stay"); // the tool still runs when serve is killed
      const pid = await daemonStarted(dir, s, reaper);
      // the watchdog has the daemon's group (serve looks for escapes every second)
      await waitFor(() => s.stderr().includes(`watchdog: watching group ${pid}\n`), {
        timeoutMs: 10_000,
        what: () => `the watchdog to watch the daemon's group ${pid} (stderr: ${s.stderr()})`,
      });
      const wd = watchdogOf(s.pid);
      assert.ok(wd, "serve runs a watchdog");
      reaper.track(wd);
      kill(s.pid, "SIGKILL");
      await gone(pid, "after kill -9 of serve");
      await waitFor(() => !alive(wd), { timeoutMs: GONE_WITHIN_MS, what: "the watchdog to exit" });
    });
  }
});
