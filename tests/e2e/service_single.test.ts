/**
 * One service per adapter, however many start it at once (the compiled binary): two `--daemon`s,
 * a service started by hand racing a `--daemon`, a relay launching while one is started by hand.
 * Whoever loses says so in one line (exit 2) or attaches to the winner, and no second service is
 * left running with its own upstreams (before, each of them started one: the endpoint file named
 * the last, and the others ran on, unseen by `status` and `stop`).
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import process from "node:process";
import { runHermit } from "../helpers/hermit.ts";
import { connectServe } from "../helpers/mcp.ts";
import { alive, Reaper, waitFor } from "../helpers/procs.ts";
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import {
  launchHermit,
  memoryServer,
  readEndpointFile,
  servicePids,
  startService,
  writeStandaloneAdapter,
} from "../helpers/service.ts";
import { tempDir } from "../helpers/tmp.ts";
import { tryLock } from "../../src/platform/lock.ts";
import { ensureServeDir, serviceLockPath } from "../../src/service/serve_dir.ts";

const ALREADY =
  /^error: a service for shared is already running at http:\/\/127\.0\.0\.1:\d+\/mcp \(pid (\d+)\); stop it with 'hermit stop [^']+'$/;

describe("one service per adapter, however many start it at once", { timeout: 240_000 }, () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  const dirs: string[] = [];
  const adapter = (name: string, hostLaunch: boolean) => {
    const dir = path.join(tmp.path, name);
    writeStandaloneAdapter(dir, { hostLaunch });
    dirs.push(dir);
    return dir;
  };
  after(async () => {
    for (const d of dirs) for (const p of servicePids(d)) reaper.track(p);
    await reaper.reap();
    tmp.cleanup();
  });

  /** Exactly one service runs for `dir` (a loser that started may take a moment to go): its pid. */
  async function theOneService(dir: string): Promise<number> {
    const ep = readEndpointFile(dir);
    assert.ok(ep, "the winner wrote its endpoint file");
    await waitFor(() => servicePids(dir).length === 1, {
      timeoutMs: 15_000,
      what: () => `one service for ${dir}, not ${servicePids(dir).join(", ")}`,
    }).finally(() => servicePids(dir).forEach((p) => reaper.track(p)));
    assert.deepEqual(servicePids(dir), [ep.pid], "the one running is the one the endpoint file names");
    return ep.pid;
  }

  async function stopAll(dir: string, pid: number): Promise<void> {
    const stop = await runHermit(["stop", dir]);
    assert.equal(stop.code, 0, stop.stderr);
    await waitFor(() => !alive(pid) && servicePids(dir).length === 0, {
      timeoutMs: 15_000,
      what: () => `every service for ${dir} to be gone (${servicePids(dir).join(", ")})`,
    });
  }

  it("two --daemon at once: one starts it, the other says where it already runs (exit 2)", async () => {
    const dir = adapter("daemons", false);
    const runs = await Promise.all(
      [0, 1].map(() => runHermit(["serve", dir, "--standalone", "--daemon"], { timeoutMs: 120_000 })),
    );
    servicePids(dir).forEach((p) => reaper.track(p));
    const said = runs.map((r) => `exit ${r.code}: ${r.stderr.trim()}`).join(" | ");
    const won = runs.filter((r) => r.code === 0);
    const lost = runs.filter((r) => r.code !== 0);
    assert.equal(won.length, 1, said);
    assert.equal(lost[0].code, 2, said);
    const m = ALREADY.exec(lost[0].stderr.trim());
    assert.ok(m, said);
    const pid = await theOneService(dir);
    assert.equal(Number(m[1]), pid, "the refusal names the service that runs");
    assert.equal(won[0].stdout.trim(), readEndpointFile(dir)!.url);
    await stopAll(dir, pid);
  });

  it("a service started by hand and a --daemon at once: one runs, the other is refused in one line", async () => {
    const dir = adapter("by-hand", false);
    const byHand = launchHermit(["serve", dir, "--standalone"], reaper);
    const daemon = await runHermit(["serve", dir, "--standalone", "--daemon"], { timeoutMs: 120_000 });
    servicePids(dir).forEach((p) => reaper.track(p));
    const pid = await theOneService(dir);
    if (daemon.code === 0) {
      // the daemon won: the service started by hand is refused and ends
      const code = await byHand.exited;
      assert.equal(code, 2, byHand.stderr());
      assert.match(byHand.stderr().trim().split("\n").at(-1)!, ALREADY);
    } else {
      assert.equal(daemon.code, 2, daemon.stderr);
      assert.match(daemon.stderr.trim(), ALREADY, JSON.stringify(daemon.stderr));
      assert.equal(pid, byHand.pid, "the service started by hand runs");
    }
    await stopAll(dir, pid);
  });

  it("a relay launching while a service is started by hand attaches to the one that runs", async () => {
    const dir = adapter("relay", true);
    const byHand = launchHermit(["serve", dir, "--standalone"], reaper);
    const s = await connectServe(dir);
    reaper.track(s.pid);
    try {
      const r = await s.client.callTool({ name: "read_graph", arguments: {} });
      assert.equal(r.isError, undefined, JSON.stringify(r));
      const pid = await theOneService(dir);
      if (pid !== byHand.pid) {
        // the relay's service won: the one started by hand was refused in one line
        assert.equal(await byHand.exited, 2, byHand.stderr());
        assert.match(byHand.stderr().trim().split("\n").at(-1)!, ALREADY);
      }
      await s.close();
      await stopAll(dir, pid);
    } finally {
      await s.close().catch(() => {});
    }
  });

  it("without flock (Bun's FFI needs its JIT), the service notes once, at debug level, that its locks are lock files", async () => {
    const dir = adapter("no-flock", false);
    const svc = await startService(dir, { BUN_JSC_useJIT: "0", HERMIT_LOG: "debug" }, { reaper });
    await svc.stop();
    const notes = svc.stderr().split("\n").filter((l) => l.includes("file locks:"));
    assert.deepEqual(notes, [
      "hermit: debug: file locks: flock is not reachable in this process (Bun's FFI needs its JIT); " +
      "using lock files, which hermits holding the same lock with flock do not see",
    ]);
  });

  it("a service still starting: status says so, stop waits for it and stops it", async () => {
    const dir = path.join(tmp.path, "slow");
    mkdirSync(dir);
    dirs.push(dir);
    // an upstream that takes 3 s to start: the service holds the adapter, its endpoint not written
    writeFileSync(
      path.join(dir, "hermit.yaml"),
      `name: slow
exports: { tools: [read_graph] }
mcp_servers:
  memory:
    command: sh
    args: [-c, 'sleep 3; exec node "$0"', ${JSON.stringify(memoryServer)}]
    env: { MEMORY_FILE_PATH: ${JSON.stringify(path.join(dir, "data", "graph.jsonl"))} }
    sandbox: { write: [data/] }
    tools: { include: [read_graph], resources: false }
serve:
  lifecycle: standalone
  host_launch: false
  instructions: SERVICE.md
`,
    );
    writeFileSync(path.join(dir, "SERVICE.md"), "hermit serve . --standalone\n");
    mkdirSync(path.join(dir, "data"));
    const svc = launchHermit(["serve", dir, "--standalone"], reaper);
    await waitFor(() => existsSync(path.join(dir, ".serve", "service.lock")), {
      what: () => `the service to take the adapter (stderr: ${svc.stderr()})`,
    });
    assert.equal(readEndpointFile(dir), undefined, "still starting");
    const status = await runHermit(["status", dir]);
    assert.equal(status.code, 5);
    assert.equal(
      status.stdout,
      "slow: starting (it holds .serve/service.lock; .serve/endpoint is not written yet)\n",
    );
    const stop = await runHermit(["stop", dir], { timeoutMs: 90_000 });
    assert.equal(stop.code, 0, stop.stdout + stop.stderr);
    assert.equal(stop.stdout, `slow: stopped (pid ${svc.pid})\n`);
    assert.equal(await svc.exited, 0, svc.stderr());
    const after = await runHermit(["status", dir]);
    assert.equal(after.stdout, "slow: not running (no endpoint file (.serve/endpoint))\n");
  });

  it("a look at the service lock (status and stop take it for an instant) does not turn a starting service away", async () => {
    const dir = adapter("probed", false);
    ensureServeDir(dir);
    // what `hermit status` does to learn whether a service is starting, held long enough to be seen
    const probe = await tryLock(serviceLockPath(dir));
    assert.ok(probe, "nobody holds the adapter yet");
    const svc = launchHermit(["serve", dir, "--standalone"], reaper);
    await new Promise((r) => setTimeout(r, 400));
    probe.release();
    const gone = () => svc.child.exitCode !== null || svc.child.signalCode !== null;
    await waitFor(() => readEndpointFile(dir) !== undefined || gone(), {
      timeoutMs: 60_000,
      what: () => `the service to start (stderr: ${svc.stderr()})`,
    });
    assert.equal(gone(), false, `the service was turned away: ${svc.stderr()}`);
    await stopAll(dir, await theOneService(dir));
  });

  it("a lock in .serve/ that is a symbolic link is refused in one line, never followed", {
    skip: process.platform === "win32" && "symbolic links need privileges on Windows",
  }, async () => {
    for (const [lock, args] of [["service.lock", []], ["lock", ["--daemon"]]] as const) {
      const dir = adapter(`link-${lock}`, false);
      mkdirSync(path.join(dir, ".serve"), { mode: 0o700 });
      const target = path.join(tmp.path, `planted-${lock}`);
      symlinkSync(target, path.join(dir, ".serve", lock));
      const r = await runHermit(["serve", dir, "--standalone", ...args], { timeoutMs: 60_000 });
      servicePids(dir).forEach((p) => reaper.track(p));
      assert.equal(r.code, 4, r.stderr);
      assert.equal(
        r.stderr.trim(),
        `error: refusing ${
          path.join(dir, ".serve", lock)
        }: it is a symbolic link (hermit never follows one there); ` +
          "remove it (hermit recreates .serve/ owner-only) and try again",
      );
      assert.equal(existsSync(target), false, "nothing was created through the link");
      assert.deepEqual(servicePids(dir), []);
    }
  });
});
