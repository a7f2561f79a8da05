/**
 * Faults with real processes on a `host_launch: true` adapter: 32 relays racing with no service
 * (exactly one service, 32 sessions, one set of upstream processes); kill -9 of the service
 * mid-session (the relay recovers: reads retried, an unconfirmable write answered "outcome
 * uncertain"); kill -9 of a host (its relay goes, the service counts one client less); the last
 * client gone (the service stops after the idle period and removes its endpoint); a stale
 * endpoint file (recovered).
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { hermitBin, hermitEnv } from "../helpers/hermit.ts";
import { connectServe, type HermitSession, textOf } from "../helpers/mcp.ts";
import { alive, cmdline, descendants, kill, Reaper, waitFor } from "../helpers/procs.ts";
import { memoryPids, readEndpointFile, servicePids, writeStandaloneAdapter } from "../helpers/service.ts";
import { tempDir } from "../helpers/tmp.ts";

const RELAYS = 32;

function withSlowTools(dir: string): void {
  const file = path.join(dir, "hermit.yaml");
  writeFileSync(
    file,
    readFileSync(file, "utf8")
      .replace(
        "exports: { tools: [read_graph, create_entities, search_nodes] }",
        "exports: { tools: [read_graph, create_entities, search_nodes, slow_read, slow_write] }",
      )
      .replace("serve:", () =>
        `tools:
  slow_read: { description: waits, run: [sleep, "4"], read_only: true, timeout: 30 }
  slow_write: { description: waits, run: [sleep, "4"], timeout: 30 }
serve:`),
  );
}

async function health(dir: string): Promise<{ clients: number; pid: number }> {
  const ep = readEndpointFile(dir)!;
  return await (await fetch(new URL("/health", ep.url), { headers: { authorization: `Bearer ${ep.token}` } }))
    .json();
}

describe("standalone: 32 relays, one service", () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  const sessions: HermitSession[] = [];
  writeStandaloneAdapter(tmp.path, { hostLaunch: true });
  after(async () => {
    await Promise.all(sessions.map((s) => s.close()));
    for (const p of servicePids(tmp.path)) reaper.track(p);
    await reaper.reap();
    tmp.cleanup();
  });

  it("32 relays started at once → exactly one service, 32 sessions, one upstream process", async () => {
    const started = await Promise.allSettled(
      Array.from({ length: RELAYS }, () => connectServe(tmp.path, { timeoutMs: 120_000 })),
    );
    for (const r of started) if (r.status === "fulfilled") sessions.push(r.value), reaper.track(r.value.pid);
    const failed = started.filter((r) => r.status === "rejected").map((r) =>
      String((r as PromiseRejectedResult).reason)
    );
    assert.deepEqual(failed, []);
    const results = await Promise.all(
      sessions.map((s) => s.client.callTool({ name: "read_graph", arguments: {} })),
    );
    assert.ok(results.every((r) => r.isError === undefined));
    assert.equal(servicePids(tmp.path).length, 1, "exactly one service");
    assert.equal(memoryPids(tmp.path).length, 1, "one set of upstream processes");
    assert.equal((await health(tmp.path)).clients, RELAYS);
  });

  it("kill -9 of a host: its relay exits and the service counts one client less", async () => {
    const before = (await health(tmp.path)).clients;
    // a host that speaks MCP: a small node script holding the relay's stdin
    const script = `
      const { spawn } = require("node:child_process");
      const c = spawn(process.argv[1], ["serve", process.argv[2]], { stdio: ["pipe", "pipe", "ignore"] });
      c.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "h", version: "0" } } }) + "\\n");
      c.stdout.once("data", () => { c.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\\n"); console.log(c.pid); });
      setInterval(() => {}, 1 << 30);`;
    const nodeHost = spawn("node", ["-e", script, hermitBin(), tmp.path], {
      env: hermitEnv() as Record<string, string>,
      stdio: ["ignore", "pipe", "ignore"],
    });
    reaper.track(nodeHost.pid);
    let out = "";
    nodeHost.stdout.setEncoding("utf8").on("data", (d) => (out += d));
    const relay = await waitFor(() => Number(out.trim()) || undefined, {
      timeoutMs: 30_000,
      what: "the relay to initialize",
    });
    reaper.track(relay);
    await waitFor(async () => (await health(tmp.path)).clients === before + 1, {
      timeoutMs: 10_000,
      what: "the new client to count",
    });
    kill(nodeHost.pid!, "SIGKILL");
    await waitFor(() => !alive(relay), { timeoutMs: 10_000, what: "the relay to exit with its host" });
    await waitFor(async () => (await health(tmp.path)).clients === before, {
      timeoutMs: 30_000,
      what: "the service to count one client less",
    });
  });
});

describe("standalone: the service dies mid-session", () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  writeStandaloneAdapter(tmp.path, { hostLaunch: true });
  withSlowTools(tmp.path);
  let s: HermitSession;
  after(async () => {
    await s?.close();
    for (const p of servicePids(tmp.path)) reaper.track(p);
    await reaper.reap();
    tmp.cleanup();
  });

  it("the relay relaunches it; reads go on, a write in flight is 'outcome uncertain'", async () => {
    s = await connectServe(tmp.path);
    reaper.track(s.pid);
    await s.client.listTools(); // the relay learns which tools are read-only
    // with a warm schema cache the relay answered before its service was up: wait for it
    const first =
      (await waitFor(() => readEndpointFile(tmp.path), { timeoutMs: 30_000, what: "the service" })).pid;
    reaper.track(first);
    const write = s.client.callTool({ name: "slow_write", arguments: {} });
    const read = s.client.callTool({ name: "slow_read", arguments: {} });
    // hermit runs a command tool by its resolved path: `/usr/bin/sleep 4`
    const running = () => descendants(first).filter((p) => /(^|\/)sleep 4$/.test(cmdline(p)));
    await waitFor(() => running().length === 2, {
      timeoutMs: 30_000,
      what: () => `both slow tools to run in the service (running: ${running().length})`,
    });
    kill(first, "SIGKILL");
    const [w, r] = await Promise.allSettled([write, read]);
    assert.equal(w.status, "rejected");
    assert.match(String((w as PromiseRejectedResult).reason), /outcome uncertain/);
    assert.equal(r.status, "fulfilled", String((r as PromiseRejectedResult).reason ?? ""));
    const second = readEndpointFile(tmp.path)!.pid;
    reaper.track(second);
    assert.notEqual(second, first);
    // the session goes on
    assert.equal((await s.client.callTool({ name: "read_graph", arguments: {} })).isError, undefined);
    assert.equal(servicePids(tmp.path).length, 1);
  });
});

describe("standalone: idle shutdown and a stale endpoint", () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  writeStandaloneAdapter(tmp.path, { hostLaunch: true, idle: 2 });
  after(async () => {
    for (const p of servicePids(tmp.path)) reaper.track(p);
    await reaper.reap();
    tmp.cleanup();
  });

  it("a host-launched service exits after the idle period once the last client left", async () => {
    const s = await connectServe(tmp.path);
    reaper.track(s.pid);
    assert.match(textOf(await s.client.callTool({ name: "read_graph", arguments: {} })), /entities/);
    const svc = readEndpointFile(tmp.path)!.pid;
    reaper.track(svc);
    await s.close();
    await waitFor(() => !alive(svc), { timeoutMs: 30_000, what: "the idle service to stop" });
    assert.equal(readEndpointFile(tmp.path), undefined, "the endpoint is removed");
    assert.equal(memoryPids(tmp.path).length, 0);
  });

  it("a stale endpoint (dead pid) is recovered: a new service starts", async () => {
    const dead = spawn("true");
    await new Promise((r) => dead.once("exit", r));
    writeFileSync(
      path.join(tmp.path, ".serve", "endpoint"),
      JSON.stringify({
        url: "http://127.0.0.1:9/mcp",
        token: "x".repeat(40),
        pid: dead.pid,
        started_at: new Date().toISOString(),
        version: "0",
        host_launched: true,
      }),
    );
    const s = await connectServe(tmp.path);
    reaper.track(s.pid);
    assert.equal((await s.client.callTool({ name: "read_graph", arguments: {} })).isError, undefined);
    const ep = readEndpointFile(tmp.path)!;
    reaper.track(ep.pid);
    assert.notEqual(ep.pid, dead.pid);
    await s.close();
  });
});
