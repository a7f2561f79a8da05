/**
 * A relay's sessions on a live service, from the compiled binary, with the test as each host (raw
 * JSON-RPC on the relay's stdio): 48 relays that send `ping` and `tools/list` before their
 * `initialize` is answered all get every `echo` answered, none "outcome uncertain", no reconnect;
 * a 6 MiB call over the service's 4 MiB body limit is an error naming the limit and the relay
 * stays on its session; and every session a relay leaves is ended — when it reconnects through a
 * proxy that failed one request (the old session is DELETEd while the service lives), when its
 * host leaves, and (the service's part) when it is killed.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, request, type Server } from "node:http";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { runHermit } from "../helpers/hermit.ts";
import { alive, kill, Reaper, waitFor } from "../helpers/procs.ts";
import { type Service, startService } from "../helpers/service.ts";
import { initializedNotification, initializeRequest, startHost } from "../helpers/relay_host.ts";
import { tempDir } from "../helpers/tmp.ts";

const initialize = initializeRequest;
const initialized = initializedNotification;
const call = (id: number, text: string) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "echo", arguments: { text } },
});

function writeEchoAdapter(dir: string): void {
  writeFileSync(
    path.join(dir, "hermit.yaml"),
    `name: echoes
exports: { tools: [echo] }
tools:
  echo:
    description: Echoes its arguments
    input: { type: object, properties: { text: { type: string } } }
    run: [cat]
serve:
  lifecycle: standalone
  host_launch: false
  instructions: SERVICE.md
  max_tool_processes: 64 # 48 relays call at once; the default bound (32) would refuse some
`,
  );
  writeFileSync(path.join(dir, "SERVICE.md"), "hermit serve . --standalone\n");
}

/** The clients the service counts (a detail /health shows behind the token). */
async function clients(svc: Service): Promise<number> {
  const res = await fetch(new URL("/health", svc.url), { headers: { authorization: `Bearer ${svc.token}` } });
  return (await res.json()).clients;
}

describe("relays and their sessions on one service", () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  const servers: Server[] = [];
  writeEchoAdapter(tmp.path);
  let svc: Service;
  after(async () => {
    for (const s of servers) s.close();
    await svc?.stop();
    await reaper.reap();
    tmp.cleanup();
  });

  it("48 relays sending ping and tools/list before initialize is answered: every echo answered, none uncertain, no reconnect", async () => {
    svc = await startService(tmp.path, {}, { reaper });
    const hosts = Array.from({ length: 48 }, () => startHost(tmp.path, [], { reaper }));
    for (const h of hosts) {
      h.send(initialize());
      h.send({ jsonrpc: "2.0", id: 2, method: "ping" });
      h.send({ jsonrpc: "2.0", id: 3, method: "tools/list" });
    }
    await Promise.all(hosts.map(async (h, i) => {
      assert.ok((await h.answer(1)).result, h.stderr());
      h.send(initialized);
      h.send(call(4, `from ${i}`));
    }));
    for (const [i, h] of hosts.entries()) {
      assert.deepEqual((await h.answer(2)).result, {}, h.stderr());
      assert.deepEqual(((await h.answer(3)).result?.tools as { name: string }[]).map((t) => t.name), [
        "echo",
      ]);
      const echo = await h.answer(4);
      assert.equal(echo.error, undefined, `relay ${i}: ${JSON.stringify(echo.error)}`);
      assert.match(JSON.stringify(echo.result), new RegExp(`from ${i}\\b`));
      assert.doesNotMatch(h.stderr(), /lost the service|reconnect/, `relay ${i}: ${h.stderr()}`);
    }
    assert.equal(await clients(svc), 48);
    for (const h of hosts) h.child.stdin!.end();
    await Promise.all(hosts.map((h) => h.exited));
    await waitFor(async () => (await clients(svc)) === 0, {
      timeoutMs: 30_000,
      what: "the sessions to end",
    });
  });

  it("a 6 MiB call over the 4 MiB body limit: an error naming the limit; the relay stays on its session", async () => {
    const h = startHost(tmp.path, [], { reaper });
    h.send(initialize());
    await h.answer(1);
    h.send(initialized);
    h.send(call(2, "x".repeat(6 * 1024 * 1024)));
    const big = await h.answer(2);
    assert.match(big.error?.message ?? "", /HTTP 413/);
    assert.match(big.error?.message ?? "", /4194304 bytes/);
    assert.doesNotMatch(big.error?.message ?? "", /outcome uncertain|went away/);
    h.send(call(3, "small"));
    assert.match(JSON.stringify((await h.answer(3)).result), /small/);
    assert.doesNotMatch(h.stderr(), /lost the service|reconnect/);
    assert.equal(await clients(svc), 1, "one session, the same one");
    h.child.stdin!.end();
    assert.equal(await h.exited, 0, h.stderr());
  });

  it("every session a relay leaves is ended: after a reconnect (the service alive), when its host leaves, when it is killed", async () => {
    const proxy = await faultProxy(svc.url);
    servers.push(proxy.server);
    const h = startHost(tmp.path, ["--serve-url", proxy.url], {
      reaper,
      env: { HERMIT_SERVE_TOKEN: svc.token },
    });
    h.send(initialize());
    await h.answer(1);
    h.send(initialized);
    h.send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    await h.answer(2);
    const first = proxy.sessions[0];
    assert.ok(first, "the relay opened a session");
    proxy.failNextPost(); // a load balancer's 503: the relay reconnects; the service never went away
    h.send({ jsonrpc: "2.0", id: 3, method: "tools/list" });
    assert.ok((await h.answer(3)).result, "a read is sent again after the reconnect");
    const second = await waitFor(() => proxy.sessions[1], { timeoutMs: 10_000, what: "a new session" });
    await waitFor(() => proxy.deleted.includes(first), {
      timeoutMs: 15_000,
      what: () => `a DELETE of the abandoned session ${first} (seen: ${proxy.deleted})`,
    });
    await waitFor(async () => (await clients(svc)) === 1, {
      timeoutMs: 30_000,
      what: "one client again",
    });
    const st = await runHermit(["status", tmp.path, "--json"]);
    assert.equal(JSON.parse(st.stdout).clients, 1, "status shows the live client only");
    h.child.stdin!.end();
    assert.equal(await h.exited, 0, h.stderr());
    assert.ok(proxy.deleted.includes(second), `the last session is DELETEd at exit (seen: ${proxy.deleted})`);
    await waitFor(async () => (await clients(svc)) === 0, { timeoutMs: 30_000, what: "no client" });

    // killed once its event stream is open: nothing is DELETEd; the service notices the stream close
    const k = startHost(tmp.path, ["--serve-url", proxy.url], {
      reaper,
      env: { HERMIT_SERVE_TOKEN: svc.token },
    });
    k.send(initialize());
    await k.answer(1);
    k.send(initialized);
    const streams = proxy.streams;
    await waitFor(() => proxy.streams > streams, {
      timeoutMs: 10_000,
      what: () => `the relay's GET (${k.stderr()})`,
    });
    k.send({ jsonrpc: "2.0", id: 2, method: "ping" }); // a round trip after it: the GET has arrived
    await k.answer(2);
    assert.equal(await clients(svc), 1);
    kill(k.child.pid!, "SIGKILL");
    await waitFor(() => !alive(k.child.pid!), { timeoutMs: 10_000, what: "the relay to die" });
    await waitFor(async () => (await clients(svc)) === 0, {
      timeoutMs: 60_000,
      what: "the service to notice the dead relay",
    });
  });
});

/**
 * An HTTP proxy in front of `target` that can answer the next POST with 503, as a balancer would,
 * and notes the sessions the service opens, the ones clients DELETE and the event streams asked for.
 */
async function faultProxy(
  target: string,
): Promise<
  {
    url: string;
    server: Server;
    failNextPost(): void;
    sessions: string[];
    deleted: string[];
    streams: number;
  }
> {
  const to = new URL(target);
  let fail = false;
  const sessions: string[] = [];
  const deleted: string[] = [];
  let streams = 0;
  const server = createServer((req, res) => {
    if (req.method === "POST" && fail) {
      fail = false;
      req.resume();
      return void res.writeHead(503, { "content-type": "text/plain" }).end("no server is available");
    }
    const sid = req.headers["mcp-session-id"];
    if (req.method === "GET") streams++;
    const up = request({
      host: to.hostname,
      port: to.port,
      path: req.url,
      method: req.method,
      headers: { ...req.headers, host: to.host },
    }, (r) => {
      const opened = r.headers["mcp-session-id"];
      if (typeof opened === "string" && !sessions.includes(opened)) sessions.push(opened);
      if (req.method === "DELETE" && typeof sid === "string") deleted.push(sid);
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on("error", () => res.destroy());
    req.pipe(up);
    res.on("close", () => up.destroy());
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`,
    server,
    failNextPost: () => (fail = true),
    sessions,
    deleted,
    get streams() {
      return streams;
    },
  };
}
