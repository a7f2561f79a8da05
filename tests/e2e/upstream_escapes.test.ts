/**
 * Daemons an upstream MCP server starts with `setsid` (a group and session of their own) do not
 * outlive that server: gone when it crashes (whether hermit saw the daemon leave its lineage
 * before, or only finds it orphaned as the server dies), and when it is recycled for being idle,
 * while serve goes on. Each case first proves the daemon runs (it writes its pid, and /proc shows
 * `sleep 1000` under it). Linux: inspects /proc.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fixtures } from "../helpers/hermit.ts";
import { connectServe, type HermitSession, textOf } from "../helpers/mcp.ts";
import { alive, cmdline, descendants, kill, Reaper, waitFor } from "../helpers/procs.ts";
import { tempDir } from "../helpers/tmp.ts";

/** The default grace (3 s) plus room for a loaded machine. */
const GONE_WITHIN_MS = 3000 + 5000;

const scripted = path.join(fixtures, "servers", "scripted.mjs");

/** A daemon (its own session) that writes its pid to daemon.pid in the server's cwd, then sleeps. */
const DAEMON = "setsid sh -c 'echo $$ > daemon.pid.tmp && mv daemon.pid.tmp daemon.pid; exec sleep 1000' &";

/**
 * An adapter whose one upstream starts a daemon, then becomes the scripted server (`CRASH_AT`
 * set: it exits on its own once the daemon has written its pid, before any sweep can see it).
 */
function adapter(dir: string, more = "", how: "child" | "orphan" | "crash-at-once" = "child"): string {
  mkdirSync(dir);
  const server = how === "crash-at-once"
    ? `${DAEMON} while [ ! -s daemon.pid ]; do sleep 0.05; done; exit 3`
    : how === "orphan"
    // double fork: the shell that starts the daemon exits at once, orphaning it
    ? `sh -c "${DAEMON.replaceAll("$", "\\$")}"; exec node ${scripted}`
    : `${DAEMON} exec node ${scripted}`;
  writeFileSync(path.join(dir, "server.sh"), server + "\n");
  writeFileSync(
    path.join(dir, "hermit.yaml"),
    `name: upstream-escapes
exports: { tools: [echo] }
mcp_servers:
  s:
    command: sh
    args: [${JSON.stringify(path.join(dir, "server.sh"))}]
${more}`,
  );
  return dir;
}

/** The daemon's pid once it runs `sleep 1000` (the proof it started). */
async function daemonStarted(dir: string, s: HermitSession, reaper: Reaper): Promise<number> {
  const file = path.join(dir, "daemon.pid");
  const pid = await waitFor(() => Number(readFileSync(file, "utf8").trim()) || undefined, {
    timeoutMs: 30_000,
    what: () => `the daemon's pid in ${file} (stderr: ${s.stderr().slice(-2000)})`,
  });
  reaper.track(pid);
  await waitFor(() => alive(pid) && cmdline(pid) === "sleep 1000", {
    timeoutMs: 5000,
    what: `the daemon ${pid} to run sleep 1000 (it runs '${cmdline(pid)}')`,
  });
  return pid;
}

const gone = (pid: number, why: string, s: HermitSession) =>
  waitFor(() => !alive(pid), {
    timeoutMs: GONE_WITHIN_MS,
    what: () => `the daemon ${pid} to be gone ${why} (stderr: ${s.stderr().slice(-2000)})`,
  });

describe("setsid daemons of upstream MCP servers", { timeout: 120_000 }, () => {
  const tmp = tempDir("hermit-upstream-escapes-");
  const reaper = new Reaper();
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  it("are stopped when the server crashes after hermit saw them leave", async () => {
    const dir = adapter(path.join(tmp.path, "crash"));
    const s = await connectServe(dir, { cwd: dir, env: { HERMIT_LOG: "debug" } });
    reaper.track(s.pid);
    const pid = await daemonStarted(dir, s, reaper);
    await waitFor(() => s.stderr().includes(`group ${pid} left group`), {
      timeoutMs: 10_000,
      what: () =>
        `serve to see the daemon ${pid} leave the server's group (stderr: ${s.stderr().slice(-2000)})`,
    });
    const server = descendants(s.pid).find((p) => cmdline(p).includes("scripted.mjs"));
    assert.ok(server, "the server runs");
    kill(server, "SIGKILL");
    await gone(pid, "after the server crashed", s);
    assert.equal(alive(s.pid), true, "serve goes on");
    // the server comes back, with a daemon of its own again
    await waitFor(async () => textOf(await s.client.callTool({ name: "echo", arguments: { text: "hi" } })), {
      timeoutMs: 30_000,
      what: () => `the restarted server to answer (stderr: ${s.stderr().slice(-2000)})`,
    });
    await s.close();
  });

  it("orphaned at once (a double fork) are stopped when the server crashes later", async () => {
    const dir = adapter(path.join(tmp.path, "orphan"), "", "orphan");
    const s = await connectServe(dir, { cwd: dir, env: { HERMIT_LOG: "debug" } });
    reaper.track(s.pid);
    const pid = await daemonStarted(dir, s, reaper);
    // found as an orphan (its lineage gone before any look): what names its server is its environment
    await waitFor(() => s.stderr().includes(`group ${pid} left `), {
      timeoutMs: 10_000,
      what: () => `serve to find the daemon ${pid} (stderr: ${s.stderr().slice(-2000)})`,
    });
    await new Promise((r) => setTimeout(r, 3000)); // the server runs on for a while
    const server = descendants(s.pid).find((p) => cmdline(p).includes("scripted.mjs"));
    assert.ok(server, "the server runs");
    kill(server, "SIGKILL");
    await gone(pid, "after the server crashed", s);
    assert.equal(alive(s.pid), true, "serve goes on");
    await s.close();
  });

  it("are stopped when the server crashes as it starts them (found orphaned)", async () => {
    const dir = adapter(path.join(tmp.path, "crash-at-once"), "", "crash-at-once");
    const s = await connectServe(dir, { cwd: dir, env: { HERMIT_LOG: "debug" } }).catch(() => undefined);
    // serve may or may not get through initialize with a server that never answers: the daemon
    // is what matters
    const file = path.join(dir, "daemon.pid");
    const pid = await waitFor(() => Number(readFileSync(file, "utf8").trim()) || undefined, {
      timeoutMs: 30_000,
      what: `the daemon's pid in ${file}`,
    });
    reaper.track(pid);
    if (s) reaper.track(s.pid);
    await waitFor(() => !alive(pid), {
      timeoutMs: GONE_WITHIN_MS,
      what: () =>
        `the daemon ${pid} to be gone after the server exited (stderr: ${s?.stderr().slice(-2000)})`,
    });
    if (s) {
      assert.equal(alive(s.pid), true, "serve goes on");
      await s.close();
    }
  });

  it("are stopped when the server is recycled for being idle", async () => {
    const dir = adapter(path.join(tmp.path, "idle"), "    idle_timeout_seconds: 1\n");
    const s = await connectServe(dir, { cwd: dir, env: { HERMIT_LOG: "debug" } });
    reaper.track(s.pid);
    const pid = await daemonStarted(dir, s, reaper);
    await waitFor(() => /recycled \(/.test(s.stderr()), {
      timeoutMs: 20_000,
      what: () => `the server to be recycled (stderr: ${s.stderr().slice(-2000)})`,
    });
    await gone(pid, "after the server was recycled", s);
    assert.equal(alive(s.pid), true, "serve goes on");
    await s.close();
  });
});
