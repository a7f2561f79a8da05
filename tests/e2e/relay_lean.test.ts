/**
 * The relay as the compiled binary runs it, for the memory a host session pays: without
 * JavaScriptCore's JIT (re-executed once under `BUN_JSC_useJIT=0`, same pid, the host's stdio
 * untouched), while the service it launches keeps its JIT (nothing of the switch inherited) and
 * the launch itself, which takes the lock through an FFI that needs the JIT, runs in a short-lived
 * launcher hermit. A user's own `BUN_JSC_useJIT` is left alone. Each relay's peak memory is
 * printed (the README's numbers come from a measurement, not from here). Linux: it reads
 * /proc/PID/environ and /proc/PID/status.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync, readFileSync } from "node:fs";
import process from "node:process";
import { initializedNotification, initializeRequest, startHost } from "../helpers/relay_host.ts";
import { alive, Reaper, waitFor } from "../helpers/procs.ts";
import { readEndpointFile, servicePids, startService, writeStandaloneAdapter } from "../helpers/service.ts";
import { tempDir } from "../helpers/tmp.ts";

const linux = process.platform === "linux";

function environ(pid: number): string[] {
  return readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
}

function peakMiB(pid: number): number {
  const kb = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  return Number(kb) / 1024;
}

describe("the relay runs without the JIT", { skip: !linux && "reads /proc" }, () => {
  const reaper = new Reaper();
  const dirs: ReturnType<typeof tempDir>[] = [];
  const adapter = (hostLaunch: boolean) => {
    const t = tempDir();
    dirs.push(t);
    writeStandaloneAdapter(t.path, { hostLaunch, idle: 5 });
    return t.path;
  };
  after(async () => {
    for (const t of dirs) for (const p of servicePids(t.path)) reaper.track(p);
    await reaper.reap();
    for (const t of dirs) t.cleanup();
  });

  /** initialize, a call, and the relay's process facts once it has answered. */
  async function session(dir: string, env: Record<string, string> = {}) {
    const host = startHost(dir, [], { reaper, env });
    host.send(initializeRequest(1));
    const init = await host.answer(1);
    assert.ok(init.result, `initialize: ${JSON.stringify(init)} ${host.stderr()}`);
    host.send(initializedNotification);
    host.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "read_graph", arguments: {} } });
    const call = await host.answer(2);
    assert.ok(call.result && !call.result.isError, `tools/call: ${JSON.stringify(call)} ${host.stderr()}`);
    const facts = { pid: host.child.pid!, env: environ(host.child.pid!), peak: peakMiB(host.child.pid!) };
    host.child.stdin!.end();
    assert.equal(await host.exited, 0, host.stderr());
    return facts;
  }

  it("attached: the same pid the host started, its JIT switched off", async () => {
    const dir = adapter(false);
    const svc = await startService(dir, {}, { reaper });
    try {
      const r = await session(dir);
      assert.ok(r.env.includes("BUN_JSC_useJIT=0"), "the relay re-executed itself without the JIT");
      assert.ok(r.env.includes("BUN_GC_TIMER_DISABLE=1"), "… and without Bun's GC timer");
      console.log(`attached relay: peak ${r.peak.toFixed(1)} MiB`);
    } finally {
      await svc.stop();
    }
  });

  it("launching: the launcher starts the service, which keeps its JIT", async () => {
    const dir = adapter(true);
    // the first relay for a manifest takes the slow path (and stores the copy the fast path reads)
    await session(dir);
    const first = readEndpointFile(dir);
    assert.ok(first, "the first relay launched a service");
    reaper.track(first.pid);
    process.kill(first.pid, "SIGTERM");
    await waitFor(() => !alive(first.pid), { timeoutMs: 15_000, what: "the service to stop" });
    const r = await session(dir);
    assert.ok(r.env.includes("BUN_JSC_useJIT=0"), "the relay re-executed itself without the JIT");
    const ep = readEndpointFile(dir);
    assert.ok(ep && ep.pid !== first.pid && alive(ep.pid), "the launcher started a new service");
    reaper.track(ep.pid);
    const svcEnv = environ(ep.pid);
    assert.ok(!svcEnv.some((e) => e.startsWith("BUN_JSC_useJIT=")), "the service has its JIT");
    assert.ok(
      !svcEnv.some((e) => e.startsWith("BUN_GC_TIMER_")),
      "and its GC timer (it needs it under load)",
    );
    assert.ok(!svcEnv.some((e) => e.startsWith("HERMIT_NO_JIT_IMAGE=")), "nothing of the re-execution leaks");
    console.log(`launching relay: peak ${r.peak.toFixed(1)} MiB`);
  });

  it("after the manifest changed under a running service, the next relays take the fast path again", async () => {
    const dir = adapter(false);
    const svc = await startService(dir, {}, { reaper }); // stores the copy of the manifest it read
    try {
      // an edit the running service does not see (as is a new hermit build: the copy no longer applies)
      appendFileSync(`${dir}/hermit.yaml`, "\n# edited while the service runs\n");
      const first = await session(dir); // a miss: the manifest is loaded the slow way, and remembered
      assert.ok(!first.env.includes("BUN_JSC_useJIT=0"), "the first relay after the edit is the slow one");
      const next = await session(dir);
      assert.ok(next.env.includes("BUN_JSC_useJIT=0"), "the next relay found the copy the first one stored");
    } finally {
      await svc.stop();
    }
  });

  it("a user's own BUN_JSC_useJIT is left as it is", async () => {
    const dir = adapter(false);
    const svc = await startService(dir, {}, { reaper });
    try {
      const r = await session(dir, { BUN_JSC_useJIT: "1" });
      assert.ok(r.env.includes("BUN_JSC_useJIT=1"));
      assert.ok(!r.env.some((e) => e.startsWith("HERMIT_NO_JIT_IMAGE=")), "not re-executed");
    } finally {
      await svc.stop();
    }
  });
});
