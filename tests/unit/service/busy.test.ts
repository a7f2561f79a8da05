/**
 * A busy standalone service is live: the HTTP front answers `/health` past `serve.max_connections`
 * (other requests get 503 `SERVICE_BUSY`); `checkEndpoint` takes a busy 503 or a timeout from the
 * process that wrote the endpoint (pid and start time) as live-but-busy, and from anything else as
 * stale; `hermit status` says a busy service runs and `hermit stop` stops it (SIGTERM when it does
 * not take the request), removing an endpoint only once its process is gone. End to end with the
 * compiled binary: tests/e2e/service_busy.test.ts.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer, type Server, type ServerResponse } from "node:http";
import process from "node:process";
import { processStartTime } from "../../../src/platform/proc.ts";
import { serviceStatus, stopService } from "../../../src/service/control.ts";
import { checkEndpoint, type Endpoint, readEndpoint, writeEndpoint } from "../../../src/service/endpoint.ts";
import { createHandler } from "../../../src/service/http_handler.ts";
import { SERVICE_BUSY } from "../../../src/service/http_errors.ts";
import { alive, Reaper, waitFor } from "../../helpers/procs.ts";
import { tempDir } from "../../helpers/tmp.ts";

const TOKEN = "t0k3n";
const BUSY_BODY = JSON.stringify({
  jsonrpc: "2.0",
  error: { code: SERVICE_BUSY, message: "busy" },
  id: null,
});

describe("createHandler past serve.max_connections", () => {
  const handler = createHandler(
    { token: TOKEN, allowedHosts: ["127.0.0.1"], allowedOrigins: [], maxOpenRequests: 4 },
    {
      health: (operator) => ({ status: 200, body: operator ? { status: "ok", pid: 42 } : { status: "ok" } }),
      live: (operator) => ({ status: 200, body: operator ? { status: "ok", live: true } : { live: true } }),
      mcp: () => Promise.resolve(new Response("{}")),
      stop: () => {},
      openRequests: () => 100,
    },
  );
  const info = { remoteAddress: "127.0.0.1", keepOpen: () => () => {} };
  const get = (path: string, headers: Record<string, string> = {}) =>
    handler(new Request(`http://127.0.0.1:1${path}`, { headers: { host: "127.0.0.1", ...headers } }), info);

  it("/health and /health/live still answer, the details only with the token", async () => {
    const operator = await get("/health", { authorization: `Bearer ${TOKEN}` });
    assert.equal(operator.status, 200);
    assert.deepEqual(await operator.json(), { status: "ok", pid: 42 });
    const anonymous = await get("/health");
    assert.equal(anonymous.status, 200);
    assert.deepEqual(await anonymous.json(), { status: "ok" });
    assert.equal((await get("/health/live")).status, 200);
  });

  it("/health keeps its checks: a foreign Host, a wrong token", async () => {
    assert.equal((await get("/health", { host: "evil.example" })).status, 403);
    assert.equal((await get("/health", { authorization: "Bearer wrong" })).status, 401);
  });

  it("everything else gets 503 SERVICE_BUSY at once", async () => {
    const res = await get("/mcp", { authorization: `Bearer ${TOKEN}` });
    assert.equal(res.status, 503);
    assert.equal((await res.json()).error.code, SERVICE_BUSY);
  });
});

/** A loopback server answering every request with `answer` (or never, when it is undefined). */
async function fakeService(answer?: (res: ServerResponse) => void): Promise<{ url: string; server: Server }> {
  const server = createServer((_req, res) => answer?.(res));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`, server };
}

const busy503 = (res: ServerResponse) =>
  res.writeHead(503, { "content-type": "application/json", "retry-after": "1" }).end(BUSY_BODY);

function endpoint(url: string, pid: number, processStart: string | undefined): Endpoint {
  return {
    url,
    token: TOKEN,
    pid,
    ...(processStart ? { process_start: processStart } : {}),
    started_at: new Date(Date.now() - 5000).toISOString(),
    version: "0",
    host_launched: false,
  };
}

describe("checkEndpoint: busy or stale", () => {
  const servers: Server[] = [];
  after(() => {
    for (const s of servers) s.closeAllConnections(), s.close();
  });
  const me = processStartTime(process.pid);

  it("a busy 503 from the process that wrote the endpoint is live but busy", async () => {
    const { url, server } = await fakeService(busy503);
    servers.push(server);
    const live = await checkEndpoint(endpoint(url, process.pid, me));
    assert.equal(live.live, true, JSON.stringify(live));
    assert.match(live.live ? live.busy ?? "" : "", /busy/);
  });

  it("no answer in time from that process is live but busy", async () => {
    const { url, server } = await fakeService();
    servers.push(server);
    const live = await checkEndpoint(endpoint(url, process.pid, me), 300);
    assert.equal(live.live, true, JSON.stringify(live));
    assert.match(live.live ? live.busy ?? "" : "", /timeout/);
  });

  it("without a start time to verify, a busy 503 is not taken as live (nor as gone)", async () => {
    const { url, server } = await fakeService(busy503);
    servers.push(server);
    assert.deepEqual(await checkEndpoint(endpoint(url, process.pid, undefined)), {
      live: false,
      why: "busy: /health answered 503 (serve.max_connections reached)",
      gone: false,
    });
  });

  it("another 503 (draining) is not live; a reused pid or a dead one is gone", async () => {
    const { url, server } = await fakeService((res) =>
      res.writeHead(503, { "content-type": "application/json" }).end(
        JSON.stringify({ status: "draining", pid: process.pid }),
      )
    );
    servers.push(server);
    const draining = await checkEndpoint(endpoint(url, process.pid, me));
    assert.deepEqual(draining, { live: false, why: "/health answered 503", gone: false });
    const reused = await checkEndpoint(endpoint(url, process.pid, "not-its-start"));
    assert.equal(!reused.live && reused.gone, true, JSON.stringify(reused));
    const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
    await new Promise((r) => child.once("exit", r));
    const dead = await checkEndpoint(endpoint(url, child.pid!, "1"));
    assert.equal(!dead.live && dead.gone, true, JSON.stringify(dead));
  });
});

describe("status and stop of a service that answers only 'busy'", () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  it("status: running, busy; stop: SIGTERM to the verified pid, the endpoint left until it is gone", async () => {
    // an older service at its cap: 503 SERVICE_BUSY to every request, /hermit/stop included
    const script = `
      const body = ${JSON.stringify(BUSY_BODY)};
      const s = require("node:http").createServer((q, r) => r.writeHead(503, { "content-type": "application/json" }).end(body));
      s.listen(0, "127.0.0.1", () => console.log(s.address().port));
      process.on("SIGTERM", () => process.exit(0));`;
    const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "ignore"] });
    reaper.track(child.pid);
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (out += d));
    const port = await waitFor(() => Number(out.trim()) || undefined, { what: "the fake service to listen" });
    const start = await waitFor(() => processStartTime(child.pid!), { what: "its start time" });
    writeEndpoint(tmp.path, endpoint(`http://127.0.0.1:${port}/mcp`, child.pid!, start));

    const status = await serviceStatus(tmp.path);
    assert.equal(status.running, true, JSON.stringify(status));
    assert.match(status.busy ?? "", /busy/);
    assert.equal(status.pid, child.pid);
    assert.equal(readEndpoint(tmp.path)?.pid, child.pid, "status leaves the endpoint");

    const stopped = await stopService(tmp.path);
    assert.deepEqual(stopped, { stopped: true, pid: child.pid });
    assert.equal(alive(child.pid!), false);

    // its process gone, the endpoint it left is stale now: the next stop removes it
    const again = await stopService(tmp.path);
    assert.equal(again.stopped, false);
    assert.match(again.stopped ? "" : again.why, /removed a stale endpoint/);
    assert.equal(readEndpoint(tmp.path), undefined);
  });

  it("stop leaves the endpoint of a process that runs but does not answer as the service", async () => {
    const { url, server } = await fakeService((res) => res.writeHead(500).end());
    try {
      writeEndpoint(tmp.path, endpoint(url, process.pid, processStartTime(process.pid)));
      const r = await stopService(tmp.path);
      assert.equal(r.stopped, false);
      assert.match(r.stopped ? "" : r.why, /still runs/);
      assert.equal(readEndpoint(tmp.path)?.pid, process.pid);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
