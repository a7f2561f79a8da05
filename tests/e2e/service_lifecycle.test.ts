/**
 * The standalone service's lifecycle with real processes: SIGTERM drains (the endpoint goes,
 * /health says draining with 503, new sessions get 503, a call in flight finishes with its result,
 * then exit 0), so does `hermit stop`, and a call longer than `serve.drain_seconds` is cut at the
 * bound; a session left
 * unused does not keep a host-launched service from its idle shutdown; a relay killed with -9 is
 * noticed; `.serve/log` stays under its cap however much an upstream writes.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, statSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { fixtures, runHermit } from "../helpers/hermit.ts";
import { connectServe, textOf } from "../helpers/mcp.ts";
import { alive, cmdline, descendants, kill, Reaper, waitFor } from "../helpers/procs.ts";
import { INITIALIZE, mcpPost, rawRequest } from "../helpers/raw_http.ts";
import {
  connectHttp,
  endpointOf,
  launchHermit,
  memoryUpstream,
  startDaemon,
  writeServiceAdapter,
  writeStandaloneAdapter,
} from "../helpers/service.ts";
import { tempDir } from "../helpers/tmp.ts";

function writeAdapter(dir: string, serve: string): void {
  writeServiceAdapter(
    dir,
    "life",
    `exports: { tools: [read_graph, slow_write, endless] }
mcp_servers:
${memoryUpstream(dir, ["read_graph"])}tools:
  slow_write: { description: writes after a while, run: [sh, -c, "sleep 2; echo done"], timeout: 30 }
  endless: { description: never ends in time, run: [sleep, "300"], timeout: 600 }
`,
    serve,
  );
}

/** `hermit serve DIR --standalone ARGS`, its endpoint once it serves. */
async function serveIn(dir: string, reaper: Reaper, args: string[] = []) {
  const svc = launchHermit(["serve", dir, "--standalone", ...args], reaper);
  return { svc, ep: await endpointOf(dir, svc.pid, svc.stderr) };
}

describe("service: graceful drain on SIGTERM", () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  it("a call in flight finishes with its result; meanwhile /health is 503 draining and new sessions get 503; exit 0", async () => {
    const dir = path.join(tmp.path, "a");
    writeAdapter(dir, ""); // the default bound, 20 s
    const { svc, ep } = await serveIn(dir, reaper);
    const port = Number(new URL(ep.url).port);
    const client = await connectHttp(ep);
    const call = client.callTool({ name: "slow_write", arguments: {} });
    await waitFor(() => descendants(svc.pid).some((p) => /sleep 2/.test(cmdline(p))), {
      timeoutMs: 20_000,
      what: "the slow tool to run",
    });
    process.kill(svc.pid, "SIGTERM"); // not child.kill: Deno then reports that signal, not the exit code
    const health = await waitFor(async () => {
      const r = await rawRequest(port, "GET /health HTTP/1.0");
      return r.status === 503 ? r : undefined;
    }, { timeoutMs: 10_000, what: "/health to say draining" });
    assert.deepEqual(JSON.parse(health.body), { status: "draining" });
    assert.equal(
      existsSync(path.join(dir, ".serve", "endpoint")),
      false,
      "the endpoint file is gone at once",
    );
    const fresh = await rawRequest(
      port,
      mcpPost(ep.token),
      INITIALIZE,
    );
    assert.equal(fresh.status, 503, fresh.body);
    assert.match(JSON.parse(fresh.body).error.message, /draining/);
    const result = await call;
    assert.equal(result.isError, undefined, JSON.stringify(result));
    assert.match(textOf(result), /done/);
    assert.equal(await svc.exited, 0, svc.stderr());
    await client.close().catch(() => {});
  });

  it("hermit stop drains too: the call in flight finishes, then the service is gone", async () => {
    const dir = path.join(tmp.path, "c");
    writeAdapter(dir, "");
    const { svc, ep } = await serveIn(dir, reaper);
    const client = await connectHttp(ep);
    const call = client.callTool({ name: "slow_write", arguments: {} });
    await waitFor(() => descendants(svc.pid).some((p) => /sleep 2/.test(cmdline(p))), {
      timeoutMs: 20_000,
      what: "the slow tool to run",
    });
    const stop = await runHermit(["stop", dir], { timeoutMs: 60_000 });
    assert.equal(stop.code, 0, stop.stderr);
    assert.match(textOf(await call), /done/);
    assert.equal(await svc.exited, 0, svc.stderr());
    await client.close().catch(() => {});
  });

  it("calls longer than serve.drain_seconds are cut at the bound: the tools are stopped, their outcome unknown; exit 0", async () => {
    const dir = path.join(tmp.path, "b");
    writeAdapter(dir, "  drain_seconds: 2\n");
    const { svc, ep } = await serveIn(dir, reaper);
    const port = Number(new URL(ep.url).port);
    // a streamed answer (the SDK client's), and a plain JSON one (a client that takes JSON only)
    const client = await connectHttp(ep);
    const streamed = client.callTool({ name: "endless", arguments: {} }).then(
      () => "answered",
      (e) => String(e),
    );
    const init = await rawRequest(port, mcpPost(ep.token), INITIALIZE);
    const sid = init.headers["mcp-session-id"];
    const plain = rawRequest(
      port,
      `${
        mcpPost(ep.token).replace("application/json, text/event-stream", "application/json")
      }\r\nmcp-session-id: ${sid}`,
      JSON.stringify({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "endless", arguments: {} },
      }),
      60_000,
    );
    const endless = await waitFor(() => {
      const running = descendants(svc.pid).filter((p) => /(^|\/)sleep 300$/.test(cmdline(p)));
      return running.length === 2 ? running : undefined;
    }, { timeoutMs: 20_000, what: "both endless calls to run" });
    process.kill(svc.pid, "SIGTERM"); // not child.kill: Deno then reports that signal, not the exit code
    assert.equal(await svc.exited, 0, svc.stderr());
    assert.ok(endless.every((p) => !alive(p)), "the cut tools' processes are stopped");
    assert.match(svc.stderr(), /2 request\(s\) still running after the wait/);
    const cut = await plain;
    assert.equal(cut.status, 500, cut.body);
    assert.match(JSON.parse(cut.body).error.message, /whether it took effect is unknown/);
    // the streamed one sees its stream end without an answer (its SDK retries the stream, then times out)
    assert.notEqual(
      await Promise.race([streamed, new Promise((r) => setTimeout(() => r("unanswered"), 200))]),
      "answered",
    );
    await client.close().catch(() => {});
  });
});

describe("service: clients that leave without saying so", () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  it("a session opened and left unused does not keep a host-launched service from its idle shutdown", async () => {
    const dir = path.join(tmp.path, "idle");
    writeStandaloneAdapter(dir, { hostLaunch: true, idle: 2 });
    const { svc, ep } = await serveIn(dir, reaper, ["--host-launched"]);
    const leaked = await rawRequest(
      Number(new URL(ep.url).port),
      mcpPost(ep.token),
      INITIALIZE,
    );
    assert.equal(leaked.status, 200, leaked.body);
    assert.ok(leaked.headers["mcp-session-id"]);
    assert.equal(
      await Promise.race([svc.exited, new Promise((r) => setTimeout(() => r("running"), 60_000))]),
      0,
    );
  });

  it("a relay killed with -9 is noticed: the service counts one client less", async () => {
    const dir = path.join(tmp.path, "relay");
    writeStandaloneAdapter(dir, { hostLaunch: false });
    const { ep } = await serveIn(dir, reaper);
    const clients = async () =>
      (await (await fetch(new URL("/health", ep.url), { headers: { authorization: `Bearer ${ep.token}` } }))
        .json())
        .clients as number;
    const s = await connectServe(dir);
    reaper.track(s.pid);
    assert.match(textOf(await s.client.callTool({ name: "read_graph", arguments: {} })), /entities/);
    assert.equal(await clients(), 1);
    kill(s.pid, "SIGKILL");
    await waitFor(async () => (await clients()) === 0, {
      timeoutMs: 60_000,
      intervalMs: 500,
      what: "the service to notice the relay is gone",
    });
    await s.close();
  });
});

describe("service: .serve/log stays under its cap", () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  it("an upstream writing 24 MiB to stderr: the log is rotated, not grown without end", async () => {
    writeServiceAdapter(
      tmp.path,
      "chatty",
      `exports: { tools: [echo] }
mcp_servers:
  chatty:
    command: node
    args: [${JSON.stringify(path.join(fixtures, "servers", "scripted.mjs"))}]
    env: { STDERR_BYTES: "${24 * 1024 * 1024}" }
`,
    );
    const d = await startDaemon(tmp.path, { reaper, env: process.env });
    const logFile = path.join(tmp.path, ".serve", "log");
    // wait until the upstream has said everything: its tool is served
    await waitFor(async () => {
      const r = await fetch(new URL("/health", d.url), { headers: { authorization: `Bearer ${d.token}` } });
      return (await r.json()).tools === 1;
    }, { timeoutMs: 120_000, intervalMs: 500, what: "the chatty upstream to be up" });
    await waitFor(() => existsSync(`${logFile}.1`) && statSync(logFile).size < 9 * 1024 * 1024, {
      timeoutMs: 60_000,
      intervalMs: 500,
      what: () => `the log to be rotated (log: ${statSync(logFile).size} bytes)`,
    });
    assert.ok(statSync(`${logFile}.1`).size < 40 * 1024 * 1024);
    await d.stop();
  });
});
