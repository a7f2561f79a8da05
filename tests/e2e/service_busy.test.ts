/**
 * A standalone service with every connection taken (`serve.max_connections` event streams held
 * open) is busy, not gone: `/health` still answers (readiness and liveness, with the token's
 * details or, without it, the status only), `hermit status` says it runs and leaves its endpoint
 * alone, the endpoint outlives the streams, and `hermit stop` drains it while it is busy.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { runHermit } from "../helpers/hermit.ts";
import { alive, Reaper, waitFor } from "../helpers/procs.ts";
import { INITIALIZE, mcpPost, rawRequest } from "../helpers/raw_http.ts";
import {
  memoryUpstream,
  readEndpointFile,
  type Service,
  startService,
  writeServiceAdapter,
} from "../helpers/service.ts";
import { tempDir } from "../helpers/tmp.ts";

const CAP = 4;

const portOf = (svc: Service) => Number(new URL(svc.url).port);

/**
 * A session (initialize, notifications/initialized) and its GET event stream, held open: the socket
 * once the stream's head has arrived, undefined when the service refused a step (past the cap).
 */
async function holdStream(svc: Service, held: Socket[]): Promise<Socket | undefined> {
  const port = portOf(svc);
  const init = await rawRequest(port, mcpPost(svc.token), INITIALIZE);
  const sid = init.headers["mcp-session-id"];
  if (init.status !== 200 || !sid) return undefined;
  const initialized = await rawRequest(
    port,
    `${mcpPost(svc.token)}\r\nmcp-session-id: ${sid}`,
    JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  );
  if (initialized.status !== 202) return undefined;
  const sock = connect(port, "127.0.0.1");
  held.push(sock);
  return await new Promise<Socket | undefined>((resolve) => {
    let got = "";
    const timer = setTimeout(() => resolve(undefined), 10_000);
    sock.on("connect", () =>
      sock.write(
        `GET /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: text/event-stream\r\nauthorization: Bearer ${svc.token}\r\nmcp-session-id: ${sid}\r\n\r\n`,
      ));
    sock.setEncoding("utf8").on("data", (d) => {
      got += d;
      if (!got.includes("\r\n")) return;
      clearTimeout(timer);
      resolve(/^HTTP\/1\.1 200/.test(got) ? sock : undefined);
    });
    sock.on("error", () => (clearTimeout(timer), resolve(undefined)));
    sock.on("close", () => (clearTimeout(timer), resolve(undefined)));
  });
}

/** Streams held until every connection is taken: a new MCP request gets 503 naming the cap. */
async function saturate(svc: Service, held: Socket[]): Promise<void> {
  for (let i = 0; i <= CAP; i++) await holdStream(svc, held);
  const refused = await rawRequest(
    portOf(svc),
    `GET /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: text/event-stream\r\nauthorization: Bearer ${svc.token}`,
  );
  assert.equal(refused.status, 503, `every connection should be taken: ${refused.body}`);
  assert.match(JSON.parse(refused.body).error.message, /serve\.max_connections/);
}

function release(held: Socket[]): void {
  for (const s of held.splice(0)) s.destroy();
}

describe("service: busy at serve.max_connections is live", () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  const held: Socket[] = [];
  let svc: Service;

  before(async () => {
    writeServiceAdapter(
      tmp.path,
      "busy",
      `exports: { tools: [read_graph] }\nmcp_servers:\n${memoryUpstream(tmp.path, ["read_graph"])}`,
      `  max_connections: ${CAP}\n  drain_seconds: 2\n`,
    );
    svc = await startService(tmp.path, {}, { reaper });
  });
  after(async () => {
    release(held);
    await reaper.reap();
    tmp.cleanup();
  });

  it("with every connection taken, /health and /health/live still answer; hermit status says running", async () => {
    await saturate(svc, held);
    const port = portOf(svc);
    const operator = await rawRequest(
      port,
      `GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${svc.token}`,
    );
    assert.equal(operator.status, 200, operator.body);
    assert.equal(JSON.parse(operator.body).pid, svc.pid);
    const anonymous = await rawRequest(port, "GET /health HTTP/1.0");
    assert.equal(anonymous.status, 200, anonymous.body);
    assert.deepEqual(Object.keys(JSON.parse(anonymous.body)), ["status"], "no details without the token");
    const live = await rawRequest(port, "GET /health/live HTTP/1.1\r\nhost: 127.0.0.1");
    assert.equal(live.status, 200, live.body);
    const forbidden = await rawRequest(port, "GET /health HTTP/1.1\r\nhost: evil.example");
    assert.equal(forbidden.status, 403, "Host is still checked");

    const status = await runHermit(["status", tmp.path], { timeoutMs: 30_000 });
    assert.equal(status.code, 0, status.stdout + status.stderr);
    assert.match(status.stdout, /running at/);
    assert.doesNotMatch(status.stdout + status.stderr, /stale|not running/);
    assert.equal(readEndpointFile(tmp.path)?.pid, svc.pid, "the endpoint of a live service stays");
  });

  it("once the streams close, it still runs and its endpoint is still there", async () => {
    release(held);
    const status = await runHermit(["status", tmp.path], { timeoutMs: 30_000 });
    assert.equal(status.code, 0, status.stdout + status.stderr);
    assert.match(status.stdout, /running at/);
    assert.equal(readEndpointFile(tmp.path)?.pid, svc.pid);
  });

  it("hermit stop stops it while every connection is taken", async () => {
    await saturate(svc, held);
    const stop = await runHermit(["stop", tmp.path], { timeoutMs: 60_000 });
    assert.equal(stop.code, 0, stop.stdout + stop.stderr);
    assert.match(stop.stdout, new RegExp(`stopped \\(pid ${svc.pid}\\)`));
    await waitFor(() => !alive(svc.pid), { timeoutMs: 30_000, what: "the service to exit" });
    assert.equal(readEndpointFile(tmp.path), undefined, "a clean stop removes the endpoint");
    release(held);
    const status = await runHermit(["status", tmp.path], { timeoutMs: 30_000 });
    assert.equal(status.code, 5, status.stdout + status.stderr);
    assert.match(status.stdout, /not running \(no endpoint file/);
  });
});
