/**
 * Relays and the services they reach, from the compiled binary, with the test as the host (raw
 * JSON-RPC over the relay's stdio, stdin held open like a real host's): `--serve-url` with a
 * wrong, missing or unreadable token fails at once with one line; a service that comes back with
 * another token ends the relay with that line, answering what waited; a service that answers 5xx
 * (to the host's initialize, or to a replayed one) is retried at a paced rate while the relay
 * lives on (the 30 s wait limit itself runs on a fake clock in tests/unit/relay/relay.test.ts).
 * And the address a service advertises is one relays can use (`--host ::1`; localhost for a
 * wildcard, a Host allowed even with `--allowed-host`); a port in use or a second service is one
 * line, exit 2, before anything starts.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer } from "node:net";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { runHermit } from "../helpers/hermit.ts";
import { connectServe } from "../helpers/mcp.ts";
import { alive, Reaper, waitFor } from "../helpers/procs.ts";
import { type Service, startService, writeStandaloneAdapter } from "../helpers/service.ts";
import { type Host, initializedNotification, initializeRequest, startHost } from "../helpers/relay_host.ts";
import { tempDir } from "../helpers/tmp.ts";

const initialize = initializeRequest();
const initialized = initializedNotification;
const toolsList = (id: number) => ({ jsonrpc: "2.0", id, method: "tools/list" });

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Resolves with the exit code, or rejects naming `what` after `ms`. */
async function exitWithin(host: Host, ms: number, what: string): Promise<number | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what}: still running after ${ms} ms; stderr: ${host.stderr()}`)),
      ms,
    );
  });
  try {
    return await Promise.race([host.exited, late]);
  } finally {
    clearTimeout(timer);
  }
}

describe("relay: a service that refuses its token", () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  writeStandaloneAdapter(tmp.path, { hostLaunch: false });
  const good = path.join(tmp.path, "good.token");
  const other = path.join(tmp.path, "other.token");
  writeFileSync(good, "g".repeat(32) + "\n");
  writeFileSync(other, "o".repeat(32) + "\n");
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  it("--serve-url with a wrong, missing or unreadable token: exit 2 at once with one line, not a hang", async () => {
    const svc = await startService(tmp.path, {}, { reaper, args: ["--token-file", good] });
    try {
      const origin = new URL(svc.url).origin;
      const cases: [string, string[], Record<string, string>, RegExp][] = [
        [
          "a wrong token",
          [],
          { HERMIT_SERVE_TOKEN: "w".repeat(32) },
          /refused the token \(Unauthorized: wrong token\); set HERMIT_SERVE_TOKEN or --token-file/,
        ],
        [
          "no token",
          [],
          {},
          /wants a token \(Unauthorized: a bearer token is required\); set HERMIT_SERVE_TOKEN or pass --token-file/,
        ],
        ["an empty HERMIT_SERVE_TOKEN", [], { HERMIT_SERVE_TOKEN: "" }, /wants a token/],
        [
          "a missing --token-file",
          ["--token-file", path.join(tmp.path, "nope")],
          {},
          /--token-file .*nope: cannot be read \(ENOENT\)/,
        ],
        [
          "an empty --token-file",
          ["--token-file", "/dev/null"],
          {},
          /--token-file \/dev\/null: the token must be at least 16 characters/,
        ],
      ];
      for (const [what, args, env, message] of cases) {
        const host = startHost(tmp.path, ["--serve-url", svc.url, ...args], { reaper, env });
        host.send(initialize);
        const code = await exitWithin(host, 15_000, what);
        assert.equal(code, 2, `${what}: ${host.stderr()}`);
        assert.match(host.stderr(), /^error: [^\n]+\n$/, what);
        assert.match(host.stderr(), message, what);
        if (!args.length) assert.ok(host.stderr().includes(`the shared service at ${origin} `), what);
      }
      for (
        const [url, message] of [["ftp://127.0.0.1:1/mcp", /must be an http:\/\/ or https:\/\/ URL/], [
          svc.url.replace("http://", "http://user:pw@"),
          /must not carry credentials/,
        ]] as const
      ) {
        const r = await runHermit(["serve", tmp.path, "--serve-url", url], { timeoutMs: 15_000 });
        assert.equal(r.code, 2, r.stderr);
        assert.match(r.stderr, message);
      }
    } finally {
      await svc.stop();
    }
  });

  it("the service comes back with another token: what waited gets the error, the relay exits 2", async () => {
    const port = await freePort();
    const first = await startService(tmp.path, {}, {
      reaper,
      args: ["--port", String(port), "--token-file", good],
    });
    const host = startHost(tmp.path, ["--serve-url", first.url, "--token-file", good], { reaper });
    let second: Service | undefined;
    try {
      host.send(initialize);
      assert.ok((await host.answer(1, 30_000)).result);
      host.send(initialized);
      host.send(toolsList(2));
      assert.ok((await host.answer(2, 30_000)).result);
      await first.stop();
      host.send(toolsList(3)); // waits for the service
      second = await startService(tmp.path, {}, {
        reaper,
        args: ["--port", String(port), "--token-file", other],
      });
      const code = await exitWithin(host, 20_000, "the relay refused by the new service");
      assert.equal(code, 2, host.stderr());
      const answer = await host.answer(3, 1000);
      assert.match(answer.error?.message ?? "", /refused the token \(Unauthorized: wrong token\)/);
      const errors = host.stderr().split("\n").filter((l) => l.startsWith("error: "));
      assert.equal(errors.length, 1, host.stderr());
      assert.match(errors[0], /^error: the shared service at http:\/\/127\.0\.0\.1:\d+ refused the token/);
      assert.doesNotMatch(host.stderr(), /^\s+at /m, "no stack trace");
    } finally {
      await first.stop();
      await second?.stop();
    }
  });
});

/** An MCP endpoint that answers like a service until `failing` is set, then 500 to every POST. */
function fakeService(): Promise<{ url: string; posts(): number; fail(): void; server: Server }> {
  let failing = false;
  let posts = 0;
  const server = createHttpServer((req, res) => {
    if (req.url === "/health") {
      return void res.writeHead(200, { "content-type": "application/json" }).end("{}");
    }
    if (req.method !== "POST") return void res.writeHead(req.method === "DELETE" ? 200 : 405).end();
    let body = "";
    req.setEncoding("utf8").on("data", (d) => (body += d)).on("end", () => {
      posts++;
      if (failing) return void res.writeHead(500, { "content-type": "text/plain" }).end("upstream broke");
      const m = JSON.parse(body);
      if (m.id === undefined) return void res.writeHead(202).end();
      const result = m.method === "initialize"
        ? {
          protocolVersion: m.params.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: "fake", version: "0" },
        }
        : { tools: [] };
      res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "fake-session" })
        .end(JSON.stringify({ jsonrpc: "2.0", id: m.id, result }));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`,
        posts: () => posts,
        fail: () => (failing = true),
        server,
      }))
  );
}

describe("relay: a service that answers 5xx", () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  const servers: Server[] = [];
  writeStandaloneAdapter(tmp.path, { hostLaunch: false });
  after(async () => {
    await reaper.reap();
    for (const s of servers) s.close();
    tmp.cleanup();
  });

  // The wait limit itself (the host's request answered after 30 s) runs on a fake clock in
  // tests/unit/relay/relay.test.ts; here the binary shows it lives on, paced, for a few real seconds.
  it("the relay lives on, paced, with its own initialize unanswered or its replays failing; it leaves with its host", async () => {
    const [a, b] = [await fakeService(), await fakeService()];
    servers.push(a.server, b.server);
    // a: the host's own initialize is never answered
    a.fail();
    const hostA = startHost(tmp.path, ["--serve-url", a.url], {
      reaper,
      env: { HERMIT_SERVE_TOKEN: "t".repeat(32) },
    });
    hostA.send(initialize);
    // b: initialized fine; then every replayed initialize fails
    const hostB = startHost(tmp.path, ["--serve-url", b.url], {
      reaper,
      env: { HERMIT_SERVE_TOKEN: "t".repeat(32) },
    });
    hostB.send(initialize);
    assert.ok((await hostB.answer(1, 30_000)).result);
    hostB.send(initialized);
    hostB.send(toolsList(2));
    assert.ok((await hostB.answer(2, 30_000)).result);
    const [postsA, postsB] = [a.posts(), b.posts()];
    b.fail();
    hostB.send(toolsList(3));
    await new Promise((r) => setTimeout(r, 3000));
    for (const host of [hostA, hostB]) {
      assert.ok(alive(host.child.pid!), `the relay lives on: ${host.stderr()}`);
      assert.doesNotMatch(host.stderr(), /Unhandled|^\s+at /m);
    }
    // 250 ms doubling: at most a handful of attempts in 3 s, not a storm
    const [moreA, moreB] = [a.posts() - postsA, b.posts() - postsB];
    assert.ok(
      moreA >= 2 && moreA <= 8 && moreB >= 2 && moreB <= 8,
      `paced: ${moreA} and ${moreB} POSTs in 3 s`,
    );
    for (const host of [hostA, hostB]) {
      // a host that leaves without waiting for the answers (Deno's child_process reports a
      // killed child as exited at once, so the process itself is watched)
      host.child.kill("SIGTERM");
      await waitFor(() => !alive(host.child.pid!), {
        timeoutMs: 10_000,
        what: "the relay to leave with its host",
      });
    }
  });
});

const ipv6Loopback = existsSync("/proc/net/if_inet6") &&
  readFileSync("/proc/net/if_inet6", "utf8").includes("00000000000000000000000000000001");

describe("service: binding, and the address relays use", () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  const token = path.join(tmp.path, "token");
  writeStandaloneAdapter(tmp.path, { hostLaunch: false });
  writeFileSync(token, "k".repeat(32) + "\n");
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  it("a port in use: exit 2 with one line naming it, before any upstream starts", async () => {
    const port = await freePort();
    const holder = createServer().listen(port, "127.0.0.1");
    await new Promise((r) => holder.once("listening", r));
    try {
      const r = await runHermit(["serve", tmp.path, "--standalone", "--port", String(port)], {
        timeoutMs: 30_000,
      });
      assert.equal(r.code, 2, r.stderr);
      assert.equal(
        r.stderr,
        `error: cannot listen on 127.0.0.1:${port}: the port is in use; choose another with --port (or serve.port), or stop what listens there\n`,
      );
    } finally {
      holder.close();
    }
  });

  it("--host ::1: the endpoint and stdout say http://[::1]:PORT, and a relay gets in", {
    skip: ipv6Loopback ? false : "no IPv6 loopback (::1) on this machine",
  }, async () => {
    const svc = await startService(tmp.path, {}, { reaper, args: ["--host", "::1"] });
    try {
      assert.match(svc.url, /^http:\/\/\[::1\]:\d+\/mcp$/);
      // the endpoint file comes first; the printed line may still be in the pipe
      const printed = await waitFor(() => svc.stdout().trim() || undefined, {
        timeoutMs: 10_000,
        what: "the printed endpoint",
      });
      assert.equal(printed, svc.url);
      const s = await connectServe(tmp.path, { timeoutMs: 30_000 });
      reaper.track(s.pid);
      assert.equal((await s.client.listTools()).tools.length, 3);
      await s.close();
      const st = await runHermit(["status", tmp.path, "--json"]);
      assert.equal(st.code, 0, st.stderr);
      assert.equal(JSON.parse(st.stdout).url, svc.url);
    } finally {
      await svc.stop();
    }
  });

  it("--host 0.0.0.0 with --allowed-host: it advertises localhost, and that Host is allowed too", async () => {
    const svc = await startService(tmp.path, {}, {
      reaper,
      args: ["--host", "0.0.0.0", "--token-file", token, "--allowed-host", "mcp.example.com"],
    });
    try {
      assert.match(svc.url, /^http:\/\/localhost:\d+\/mcp$/);
      const s = await connectServe(tmp.path, { timeoutMs: 30_000 });
      reaper.track(s.pid);
      assert.equal((await s.client.listTools()).tools.length, 3);
      await s.close();
    } finally {
      await svc.stop();
    }
  });

  it("a second service for the adapter, in the foreground or as a daemon: exit 2 naming the first and how to stop it", async () => {
    const svc = await startService(tmp.path, {}, { reaper });
    try {
      for (const extra of [[], ["--daemon"]]) {
        const r = await runHermit(["serve", ".", "--standalone", ...extra], {
          cwd: tmp.path,
          timeoutMs: 30_000,
        });
        assert.equal(r.code, 2, r.stderr);
        assert.equal(
          r.stderr,
          `error: a service for shared is already running at ${svc.url} (pid ${svc.pid}); stop it with 'hermit stop .'\n`,
          extra.join(" "),
        );
      }
    } finally {
      await svc.stop();
    }
  });
});
