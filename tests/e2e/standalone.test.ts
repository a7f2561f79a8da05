/**
 * The standalone service from the compiled binary: the endpoint file, HTTP security (token,
 * Host/Origin, unknown sessions, body cap, open /health), many clients on one set of upstream
 * processes, `--daemon`, `status` and `stop`, and the relay's two launch policies.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import { connect, createServer } from "node:net";
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { runHermit } from "../helpers/hermit.ts";
import { connectServe, textOf } from "../helpers/mcp.ts";
import { alive, Reaper, waitFor } from "../helpers/procs.ts";
import {
  connectHttp,
  httpClient,
  memoryPids,
  readEndpointFile,
  servicePids,
  startDaemon,
  startService,
  writeServiceAdapter,
  writeStandaloneAdapter,
} from "../helpers/service.ts";
import { tempDir } from "../helpers/tmp.ts";

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } },
};

function post(url: string, headers: Record<string, string>, body: unknown = initialize): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** A POST over a raw socket: fetch implementations may not let a test choose the Host header. */
function rawStatus(url: string, headers: Record<string, string>): Promise<number> {
  const u = new URL(url);
  const body = JSON.stringify(initialize);
  const head = Object.entries({
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    ...headers,
  })
    .map(([k, v]) => `${k}: ${v}\r\n`).join("");
  return new Promise((resolve, reject) => {
    const sock = connect(Number(u.port), u.hostname, () => {
      sock.write(
        `POST ${u.pathname} HTTP/1.1\r\n${head}content-length: ${
          Buffer.byteLength(body)
        }\r\nconnection: close\r\n\r\n${body}`,
      );
    });
    let got = "";
    sock.setEncoding("utf8").on("data", (d) => {
      got += d;
      const m = /^HTTP\/1\.1 (\d{3})/.exec(got);
      if (m) {
        resolve(Number(m[1]));
        sock.destroy();
      }
    });
    sock.on("error", reject);
  });
}

describe("standalone service in the foreground", () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  let url = "";
  let token = "";
  let pid = 0;

  before(async () => {
    writeStandaloneAdapter(tmp.path);
    const svc = await startService(tmp.path, {}, { reaper });
    pid = svc.pid;
    url = await waitFor(() => /^(http:\/\/127\.0\.0\.1:\d+\/mcp)$/m.exec(svc.stdout())?.[1], {
      timeoutMs: 30_000,
      what: () => `the printed endpoint (stdout: ${svc.stdout()})`,
    });
    token = svc.token;
  });
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  it("writes the endpoint file: url, token, pid, start time, version, mode 0600", () => {
    const ep = readEndpointFile(tmp.path)!;
    assert.equal(ep.url, url);
    assert.equal(ep.pid, pid);
    assert.ok(ep.token.length >= 32);
    assert.ok(ep.process_start && ep.started_at && ep.version);
    assert.equal(ep.host_launched, false);
    assert.equal(statSync(path.join(tmp.path, ".serve", "endpoint")).mode & 0o777, 0o600);
    assert.equal(statSync(path.join(tmp.path, ".serve")).mode & 0o777, 0o700);
  });

  it("answers /health: the status to anyone, upstream state with the token", async () => {
    assert.deepEqual(await (await fetch(new URL("/health", url))).json(), { status: "ok" });
    const health =
      await (await fetch(new URL("/health", url), { headers: { authorization: `Bearer ${token}` } }))
        .json();
    assert.equal(health.status, "ok");
    assert.equal(health.pid, pid);
    assert.equal(health.upstreams[0].name, "memory");
    assert.equal(health.upstreams[0].state, "connected");
  });

  it("refuses MCP requests without the right token (401)", async () => {
    assert.equal((await post(url, {})).status, 401);
    assert.equal((await post(url, { authorization: "Bearer nope" })).status, 401);
    assert.equal((await post(url, { authorization: `Bearer ${token}x` })).status, 401);
    assert.equal((await post(url, { authorization: `Bearer ${token}` })).status, 200);
  });

  it("refuses a foreign Origin or Host (403), even with the token", async () => {
    const auth = { authorization: `Bearer ${token}` };
    assert.equal((await post(url, { ...auth, origin: "https://evil.example" })).status, 403);
    assert.equal(await rawStatus(url, { ...auth, host: "evil.example" }), 403);
    assert.equal(await rawStatus(url, { ...auth, host: new URL(url).host }), 200);
    assert.equal((await post(url, { ...auth, origin: new URL(url).origin })).status, 200);
  });

  it("answers 404 for an unknown session and 413 for an oversized body", async () => {
    const auth = { authorization: `Bearer ${token}` };
    const unknown = await post(url, { ...auth, "mcp-session-id": "no-such-session" }, {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/list",
    });
    assert.equal(unknown.status, 404);
    const huge = await post(url, auth, JSON.stringify({ ...initialize, pad: "x".repeat(5 * 1024 * 1024) }));
    assert.equal(huge.status, 413);
  });

  it("serves many clients from one set of upstream processes", async () => {
    const clients = await Promise.all(Array.from({ length: 5 }, () => httpClient(url, token)));
    await clients[0].callTool({
      name: "create_entities",
      arguments: { entities: [{ name: "shared", entityType: "t", observations: ["one"] }] },
    });
    for (const c of clients) {
      assert.match(
        textOf(await c.callTool({ name: "search_nodes", arguments: { query: "shared" } })),
        /"shared"/,
      );
    }
    const health =
      await (await fetch(new URL("/health", url), { headers: { authorization: `Bearer ${token}` } }))
        .json();
    assert.ok(health.clients >= 5, `clients ${health.clients}`);
    assert.equal(memoryPids(tmp.path).length, 1);
    await Promise.all(clients.map((c) => c.close()));
  });

  it("status reports it; SIGTERM stops it and removes the endpoint", async () => {
    const st = await runHermit(["status", tmp.path, "--json"]);
    assert.equal(st.code, 0, st.stderr);
    const s = JSON.parse(st.stdout);
    assert.equal(s.running, true);
    assert.equal(s.pid, pid);
    process.kill(pid, "SIGTERM");
    await waitFor(() => !alive(pid), { timeoutMs: 10_000, what: "the service to exit" });
    assert.equal(readEndpointFile(tmp.path), undefined);
    assert.equal(memoryPids(tmp.path).length, 0);
    const after = await runHermit(["status", tmp.path]);
    assert.equal(after.code, 5);
    assert.match(after.stdout, /not running/);
  });
});

describe("standalone service as a daemon, and relays", () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  before(() => writeStandaloneAdapter(tmp.path, { hostLaunch: false }));
  after(async () => {
    for (const p of servicePids(tmp.path)) reaper.track(p);
    await reaper.reap();
    tmp.cleanup();
  });

  it("with host_launch: false and no service, the relay exits 5 with one line naming the instructions", async () => {
    const r = await runHermit(["serve", tmp.path], { input: JSON.stringify(initialize) + "\n" });
    assert.equal(r.code, 5);
    assert.equal(r.stdout, "");
    assert.equal(
      r.stderr.trim(),
      `error: no service is running for shared; start it with 'hermit serve ${tmp.path} --standalone', see SERVICE.md`,
    );
  });

  it("service options without --standalone are usage errors, not silently ignored", async () => {
    for (
      const extra of [["--port", "8123"], ["--host", "0.0.0.0"], ["--daemon"], [
        "--allowed-origin",
        "https://x.example",
      ]]
    ) {
      const r = await runHermit(["serve", tmp.path, ...extra]);
      assert.equal(r.code, 2, extra.join(" "));
      assert.equal(r.stderr.trim(), `error: ${extra[0]} goes with --standalone`);
    }
  });

  it("--daemon starts it in the background (on the --port asked for); a relay attaches; stop ends it", async () => {
    const port = await freePort();
    const ep = await startDaemon(tmp.path, { reaper, args: ["--port", String(port)] });
    assert.equal(ep.stdout.trim(), ep.url);
    assert.equal(new URL(ep.url).port, String(port), "the daemon got --port");
    const s = await connectServe(tmp.path);
    reaper.track(s.pid);
    const { tools } = await s.client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ["read_graph", "create_entities", "search_nodes"]);
    assert.equal((await s.client.callTool({ name: "read_graph", arguments: {} })).isError, undefined);
    assert.deepEqual(servicePids(tmp.path), [ep.pid], "the relay attached to the running service");
    await s.close();
    const stop = await runHermit(["stop", tmp.path]);
    assert.equal(stop.code, 0, stop.stderr);
    assert.ok(!alive(ep.pid));
    assert.equal(readEndpointFile(tmp.path), undefined);
    assert.match(readFileLog(tmp.path), /serving shared at http/);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function readFileLog(dir: string): string {
  try {
    return readFileSync(path.join(dir, ".serve", "log"), "utf8");
  } catch {
    return "";
  }
}

describe("a standalone service's workspace", () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  it("is the adapter directory, whatever directory it was started from (README: One shared service)", async () => {
    const dir = path.join(tmp.path, "adapter");
    writeServiceAdapter(
      dir,
      "workspace",
      `exports: { tools: [where] }
tools:
  where:
    description: prints the workspace it runs for
    input: { type: object }
    run: [sh, -c, 'printf %s "$HERMIT_WORKSPACE"']
`,
    );
    // started by hand from the test's own directory (the repository), not the adapter's
    const svc = await startService(dir, { HERMIT_WORKSPACE: undefined }, { reaper });
    const client = await connectHttp(svc);
    try {
      const r = await client.callTool({ name: "where", arguments: {} });
      assert.equal(textOf(r as never), dir);
    } finally {
      await client.close();
      await svc.stop();
    }
  });
});
