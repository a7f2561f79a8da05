/**
 * The standalone service's HTTP front against what balancers and attackers send, from the compiled
 * binary over real sockets: requests without a usable Host (HTTP/1.0, an empty Host) get a 4xx on
 * /mcp and an answer on /health, without an error line each; /health checks Host like /mcp, shows
 * a caller without the token only its status and keeps the details (redacted) behind the token;
 * the caps on sessions, concurrent requests and command-tool processes answer a clear error at
 * once; idle keep-alive connections are closed, and a flood of them does not make the service
 * unreachable under a small descriptor limit.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { findTool, requirements } from "../helpers/rootfs.ts";
import { cmdline, descendants, Reaper, waitFor } from "../helpers/procs.ts";
import { idleConnections, INITIALIZE, mcpHeaders, mcpPost, rawRequest } from "../helpers/raw_http.ts";
import {
  connectHttp,
  endHttp,
  memoryUpstream,
  type Service,
  startService,
  writeServiceAdapter,
} from "../helpers/service.ts";
import { runHermit } from "../helpers/hermit.ts";
import { tempDir } from "../helpers/tmp.ts";

const SECRET = "sk-live0123456789abcdefXYZ";

/** A standalone adapter: the memory server, a slow read-only command tool, `serve` extras. */
function writeAdapter(dir: string, serve: string, upstreams = ""): void {
  writeServiceAdapter(
    dir,
    "front",
    `exports: { tools: [read_graph, slow] }
mcp_servers:
${memoryUpstream(dir, ["read_graph"])}${upstreams}tools:
  slow: { description: waits, run: [sleep, "3"], read_only: true, timeout: 30 }
`,
    serve,
  );
}

const portOf = (svc: Service) => Number(new URL(svc.url).port);

describe("service: Host-less requests, /health, bad requests", () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  let svc: Service;
  let remote: Server;

  before(async () => {
    // a remote upstream that refuses hermit and echoes the credentials it was sent
    remote = createServer((_req, res) => {
      res.writeHead(500, { "content-type": "text/plain" });
      res.end(`bad credentials api_key=${SECRET} Authorization: Bearer ${SECRET}`);
    });
    await new Promise<void>((r) => remote.listen(0, "127.0.0.1", r));
    const port = (remote.address() as { port: number }).port;
    writeAdapter(tmp.path, "", `  remote:\n    url: http://127.0.0.1:${port}/mcp?api_key=${SECRET}\n`);
    svc = await startService(tmp.path, {}, { reaper });
  });
  after(async () => {
    await reaper.reap();
    remote?.close();
    tmp.cleanup();
  });

  it("HTTP/1.0 and empty-Host requests: /health answers, /mcp is a 4xx, never a 500", async () => {
    const port = portOf(svc);
    for (const head of ["GET /health HTTP/1.0", "GET /health HTTP/1.1\r\nhost:"]) {
      const r = await rawRequest(port, head);
      assert.equal(r.status, 200, `${head}: ${r.body}`);
      assert.equal(JSON.parse(r.body).status, "degraded", r.body); // the remote upstream is down
    }
    for (const head of ["POST /mcp HTTP/1.0", "POST /mcp HTTP/1.1\r\nhost:"]) {
      const r = await rawRequest(port, `${head}\r\n${mcpHeaders(svc.token)}`, INITIALIZE);
      assert.ok(r.status >= 400 && r.status < 500, `${head}: ${r.status} ${r.body}`);
      assert.match(JSON.parse(r.body).error.message, /Host/);
    }
  });

  it("a flood of bad requests gets 4xx answers without an error line each", async () => {
    const port = portOf(svc);
    const before = svc.stderr().length;
    const answers = await Promise.all(
      Array.from({ length: 200 }, () => rawRequest(port, "POST /mcp HTTP/1.1\r\nhost:", "{}")),
    );
    assert.ok(answers.every((a) => a.status >= 400 && a.status < 500), JSON.stringify(answers[0]));
    const logged = svc.stderr().slice(before);
    assert.doesNotMatch(logged, /error/i, logged.slice(0, 500));
    assert.ok(logged.split("\n").length < 10, `${logged.split("\n").length} log lines for 200 bad requests`);
  });

  it("the service's own log carries the upstream's failure redacted too (it lands in .serve/log)", async () => {
    await waitFor(() => /mcp_servers\.remote/.test(svc.stderr()), {
      timeoutMs: 30_000,
      what: () => `the upstream's failure in the log (stderr: ${svc.stderr()})`,
    });
    assert.doesNotMatch(svc.stderr(), new RegExp(SECRET), svc.stderr());
  });

  it("/health checks Host like /mcp and shows its details only with the token, redacted", async () => {
    const port = portOf(svc);
    const foreign = await rawRequest(port, "GET /health HTTP/1.1\r\nhost: evil.example");
    assert.equal(foreign.status, 403, foreign.body);
    const glued = await rawRequest(port, "GET /health HTTP/1.1\r\nhost: [::1]evil.example");
    assert.equal(glued.status, 403, "a bracketed loopback address with a name glued on is not loopback");
    const v6 = await rawRequest(port, `GET /health HTTP/1.1\r\nhost: [::1]:${port}`);
    assert.equal(v6.status, 200, v6.body);
    const open = await rawRequest(port, "GET /health HTTP/1.1\r\nhost: 127.0.0.1");
    assert.deepEqual(Object.keys(JSON.parse(open.body)), ["status"], open.body);
    assert.doesNotMatch(open.body, new RegExp(SECRET));
    const wrong = await rawRequest(
      port,
      "GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer nope",
    );
    assert.equal(wrong.status, 401);
    const full = await rawRequest(
      port,
      `GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${svc.token}`,
    );
    assert.equal(full.status, 200, full.body);
    const health = JSON.parse(full.body);
    assert.equal(health.pid, svc.pid);
    const remote = health.upstreams.find((u: { name: string }) => u.name === "remote");
    assert.ok(remote?.lastError, full.body);
    assert.doesNotMatch(full.body, new RegExp(SECRET), "the upstream's error is redacted");
    assert.match(remote.lastError, /REDACTED/);
  });
});

describe("service: bound to another loopback address", {
  skip: process.platform !== "linux" && "127.0.0.2 is loopback on Linux only",
}, () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  it("--host 127.0.0.2: the address it advertises is one it answers to (clients, status)", async () => {
    writeAdapter(tmp.path, "");
    const svc = await startService(tmp.path, {}, { reaper, args: ["--host", "127.0.0.2"] });
    assert.match(svc.url, /^http:\/\/127\.0\.0\.2:\d+\/mcp$/);
    const client = await connectHttp(svc);
    assert.ok((await client.listTools()).tools.some((t) => t.name === "slow"));
    await endHttp(client);
    const status = await runHermit(["status", tmp.path]);
    assert.equal(status.code, 0, status.stdout + status.stderr);
    assert.doesNotMatch(status.stdout, /stale|403/);
    await svc.stop();
  });
});

describe("service: caps answer at once with a clear error", () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  let svc: Service;

  before(async () => {
    writeAdapter(tmp.path, "  max_sessions: 3\n  max_connections: 5\n  max_tool_processes: 2\n");
    svc = await startService(tmp.path, {}, { reaper });
  });
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  it("sessions: a burst of initialize requests at once takes no more than serve.max_sessions", async () => {
    const answers = await Promise.all(
      Array.from({ length: 40 }, () => rawRequest(portOf(svc), mcpPost(svc.token), INITIALIZE)),
    );
    const taken = answers.filter((a) => a.status === 200);
    assert.equal(taken.length, 3, answers.map((a) => a.status).join(" "));
    assert.ok(answers.every((a) => a.status === 200 || a.status === 503));
    for (const a of taken) {
      const ended = await rawRequest(
        portOf(svc),
        `DELETE /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${svc.token}\r\nmcp-session-id: ${
          a.headers["mcp-session-id"]
        }`,
      );
      assert.equal(ended.status, 200);
    }
  });

  it("sessions: past serve.max_sessions, initialize gets 503 naming the cap; a closed session frees a place", async () => {
    const clients = await Promise.all(Array.from({ length: 3 }, () => connectHttp(svc)));
    const extra = await rawRequest(
      portOf(svc),
      mcpPost(svc.token),
      INITIALIZE,
    );
    assert.equal(extra.status, 503, extra.body);
    assert.match(JSON.parse(extra.body).error.message, /serve\.max_sessions/);
    await endHttp(clients[0]);
    const again = await waitFor(async () => {
      const r = await rawRequest(
        portOf(svc),
        mcpPost(svc.token),
        INITIALIZE,
      );
      return r.status === 200 ? r : undefined;
    }, { timeoutMs: 10_000, what: "a session to be accepted after one closed" });
    const sid = again.headers["mcp-session-id"];
    assert.ok(sid);
    const ended = await rawRequest(
      portOf(svc),
      `DELETE /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${svc.token}\r\nmcp-session-id: ${sid}`,
    );
    assert.equal(ended.status, 200);
    await Promise.all(clients.slice(1).map(endHttp));
  });

  it("command tools: past serve.max_tool_processes a call is refused at once, not queued or spawned", async () => {
    const client = await connectHttp(svc);
    try {
      const calls = [0, 1].map(() => client.callTool({ name: "slow", arguments: {} }));
      // a tool's process is first the launcher (`hermit __sandbox PLAN /usr/bin/sleep 3`), and for an
      // instant inside execve its command line reads empty: count only what has become `sleep 3`,
      // and look for launchers too when asking whether a third started
      const execed = /^(\S*\/)?sleep 3$/;
      const sleeping = (re = execed) => descendants(svc.pid).filter((p) => re.test(cmdline(p)));
      await waitFor(() => sleeping().length === 2, { timeoutMs: 20_000, what: "two slow tools to run" });
      const running = new Set(sleeping());
      const third = await client.callTool({ name: "slow", arguments: {} });
      assert.equal(third.isError, true);
      assert.match(JSON.stringify(third.content), /serve\.max_tool_processes/);
      // by pid: on a loaded machine one of the two may already have ended its 3 s
      assert.deepEqual(
        sleeping(/(^|\/)sleep 3$/).filter((p) => !running.has(p)),
        [],
        "no third process started",
      );
      for (const r of await Promise.all(calls)) assert.equal(r.isError, undefined, JSON.stringify(r));
    } finally {
      await endHttp(client);
    }
  });

  it("connections: past serve.max_connections open requests, a new one gets 503 at once; /health still answers", async () => {
    const clients = await Promise.all(Array.from({ length: 3 }, () => connectHttp(svc)));
    try {
      // three event streams and two slow calls: five requests open, the cap
      const calls = clients.slice(0, 2).map((c) => c.callTool({ name: "slow", arguments: {} }));
      const mcp =
        `GET /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: text/event-stream\r\nauthorization: Bearer ${svc.token}`;
      await waitFor(async () => {
        const r = await rawRequest(portOf(svc), mcp);
        return r.status === 503 ? r : undefined;
      }, { timeoutMs: 20_000, what: "a request past the cap to be refused" }).then((r) =>
        assert.match(JSON.parse(r.body).error.message, /serve\.max_connections/)
      );
      // the service is busy, not gone: what status, stop and load balancers ask still answers
      const health = await rawRequest(portOf(svc), "GET /health HTTP/1.1\r\nhost: 127.0.0.1");
      assert.equal(health.status, 200, health.body);
      await Promise.allSettled(calls);
    } finally {
      await Promise.all(clients.map(endHttp));
    }
  });
});

const prlimit = findTool("prlimit");
const req = requirements([{ what: "prlimit", ok: !!prlimit, fix: "apt-get install -y util-linux" }]);

describe("service: idle connections", { skip: req.skip }, () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  let svc: Service;

  before(async () => {
    req.assertReady();
    writeAdapter(tmp.path, "");
    // a small descriptor limit, as in a container: held connections must not lock clients out
    svc = await startService(tmp.path, {}, { reaper, prefix: [prlimit!, "--nofile=256:256", "--"] });
  });
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  it("an idle keep-alive connection is closed by the service, after /health or an MCP request alike", async () => {
    const idle = await idleConnections(portOf(svc), 1);
    const mcp = await idleConnections(portOf(svc), 1, { head: mcpPost(svc.token), body: INITIALIZE });
    assert.equal(idle.answered + mcp.answered, 2);
    await waitFor(() => idle.open() + mcp.open() === 0, {
      timeoutMs: 90_000,
      what: "the service to close the idle connections",
    });
  });

  it("300 idle connections under a 256-descriptor limit do not lock a client out", async () => {
    const flood = await idleConnections(portOf(svc), 300);
    try {
      const client = await waitFor(() => connectHttp(svc), {
        timeoutMs: 60_000,
        intervalMs: 500,
        what: "an MCP client to get through",
      });
      assert.ok((await client.listTools()).tools.length > 0);
      await client.close();
    } finally {
      flood.close();
    }
  });
});
