/**
 * `DIR/.serve/` in a shared or hostile adapter directory, with the compiled binary as the relay:
 * a planted endpoint file that is world-writable, in a directory others may write, or another
 * user's is refused with one line (exit 4) and the test's own listener it points at receives
 * nothing; an endpoint URL that is not this machine is never contacted (the relay's fetches are
 * sent through the test as an HTTP proxy, so any attempt would show); `.serve` and `.serve/log`
 * as symbolic links are refused, the targets untouched. And the service's runtime files never
 * show up in `git status` of an adapter kept in git, with a user-launched or a host-launched
 * service, also when `.serve/` was made by an older hermit without its `.gitignore`.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { createServer, type IncomingMessage, type Server } from "node:http";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import process from "node:process";
import { runHermit } from "../helpers/hermit.ts";
import { connectServe } from "../helpers/mcp.ts";
import { Reaper, waitFor } from "../helpers/procs.ts";
import { findTool, isRoot, requirements } from "../helpers/rootfs.ts";
import { readEndpointFile, servicePids, startService, writeStandaloneAdapter } from "../helpers/service.ts";
import { tempDir } from "../helpers/tmp.ts";

const initialize = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } },
}) + "\n";

/** A listener that answers like a hermit service (as this test's pid) and records every request. */
async function impostor(): Promise<{ port: number; seen: string[]; server: Server }> {
  const seen: string[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    if ((req.url ?? "").endsWith("/health")) {
      return void res.writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ status: "ok", pid: process.pid, clients: 0, upstreams: [] }));
    }
    res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "stolen" }).end(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        result: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          serverInfo: { name: "evil", version: "0" },
        },
      }),
    );
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return { port: (server.address() as { port: number }).port, seen, server };
}

function plant(dir: string, url: string, fileMode = 0o600, dirMode = 0o700): string {
  const serve = path.join(dir, ".serve");
  mkdirSync(serve, { recursive: true });
  chmodSync(serve, dirMode);
  const file = path.join(serve, "endpoint");
  writeFileSync(
    file,
    JSON.stringify({
      url,
      token: "t".repeat(40),
      pid: process.pid,
      started_at: new Date().toISOString(),
      version: "0",
      host_launched: false,
    }),
  );
  chmodSync(file, fileMode);
  return file;
}

describe(".serve/ that is not to be trusted", () => {
  const reaper = new Reaper();
  const tmps: { path: string; cleanup(): void }[] = [];
  const servers: Server[] = [];
  const adapter = (hostLaunch = false) => {
    const tmp = tempDir();
    tmps.push(tmp);
    writeStandaloneAdapter(tmp.path, { hostLaunch });
    return tmp.path;
  };
  after(async () => {
    for (const s of servers) s.close();
    for (const t of tmps) for (const p of servicePids(t.path)) reaper.track(p);
    await reaper.reap();
    for (const t of tmps) t.cleanup();
  });

  const cases: [string, (dir: string, url: string) => string, RegExp][] = [
    [
      "a world-writable endpoint file",
      (d, u) => plant(d, u, 0o666),
      /writable by group or others \(mode 0666\)/,
    ],
    [
      "an endpoint in a .serve/ others may write",
      (d, u) => (plant(d, u, 0o600, 0o777), path.join(d, ".serve")),
      /writable by group or others \(mode 0777\)/,
    ],
  ];
  for (const [what, make, why] of cases) {
    it(`${what}: one line, exit 4, and its listener receives nothing (twice: the slow path, then the fast one)`, async () => {
      const imp = await impostor();
      servers.push(imp.server);
      const dir = adapter();
      const refused = make(dir, `http://127.0.0.1:${imp.port}/mcp`);
      for (let run = 0; run < 2; run++) {
        const r = await runHermit(["serve", dir], { input: initialize, timeoutMs: 30_000 });
        assert.equal(r.code, 4, r.stderr);
        assert.equal(r.stdout, "");
        assert.match(r.stderr, /^error: refusing [^\n]+\n$/);
        assert.ok(r.stderr.includes(`refusing ${refused}: `), r.stderr);
        assert.match(r.stderr, why);
      }
      assert.deepEqual(imp.seen, [], "nothing was sent to the planted address");
    });
  }

  it("hermit status and hermit stop refuse a planted endpoint too: the pid it names is not signalled", async () => {
    const imp = await impostor();
    servers.push(imp.server);
    const dir = adapter();
    const victim = spawn("sleep", ["60"], { stdio: "ignore" });
    reaper.track(victim.pid);
    const file = plant(dir, `http://127.0.0.1:${imp.port}/mcp`, 0o666);
    const planted = JSON.parse(readFileSync(file, "utf8"));
    writeFileSync(file, JSON.stringify({ ...planted, pid: victim.pid }));
    chmodSync(file, 0o666);
    for (const command of ["status", "stop"]) {
      const r = await runHermit([command, dir], { timeoutMs: 60_000 });
      assert.equal(r.code, 4, `${command}: ${r.stdout}${r.stderr}`);
      assert.ok(r.stderr.includes(`refusing ${file}: `), r.stderr);
    }
    assert.equal(victim.exitCode, null, "the pid the endpoint named is alive");
    assert.equal(victim.signalCode, null);
    assert.deepEqual(imp.seen, [], "nothing was sent to the planted address");
  });

  it("another user's endpoint file: refused the same way", {
    skip: isRoot() ? false : "needs root to make a file owned by another user",
  }, async () => {
    const imp = await impostor();
    servers.push(imp.server);
    const dir = adapter();
    const file = plant(dir, `http://127.0.0.1:${imp.port}/mcp`);
    chownSync(file, 65534, 65534);
    const r = await runHermit(["serve", dir], { input: initialize, timeoutMs: 30_000 });
    assert.equal(r.code, 4, r.stderr);
    assert.match(
      r.stderr,
      /^error: refusing .*endpoint: it belongs to another user \(uid 65534; you are 0\)/,
    );
    assert.deepEqual(imp.seen, []);
  });

  it("an endpoint URL that is not this machine is never contacted", async () => {
    const proxy = await impostor(); // every fetch of the relay goes through it
    servers.push(proxy.server);
    const dir = adapter();
    plant(dir, "http://192.0.2.1:9/mcp"); // TEST-NET-1: not this machine
    const proxied = {
      http_proxy: `http://127.0.0.1:${proxy.port}`,
      HTTP_PROXY: `http://127.0.0.1:${proxy.port}`,
    };
    const r = await runHermit(["serve", dir], {
      input: initialize,
      env: { ...process.env, ...proxied },
      timeoutMs: 30_000,
    });
    assert.deepEqual(proxy.seen, [], "no request to the foreign address");
    assert.equal(r.code, 5, r.stderr);
    assert.match(r.stderr, /^error: no service is running for shared/);
  });

  it(".serve as a symbolic link to a shared directory: refused; the target is neither chmodded nor written", async () => {
    const dir = adapter(true);
    const shared = path.join(tmps.at(-1)!.path, "shared");
    mkdirSync(shared);
    chmodSync(shared, 0o1777);
    symlinkSync(shared, path.join(dir, ".serve"));
    const r = await runHermit(["serve", dir], { input: initialize, timeoutMs: 60_000 });
    assert.equal(r.code, 4, r.stderr);
    assert.match(
      r.stderr,
      /^error: refusing .*\.serve: it is a symbolic link \(hermit never follows one there\)/,
    );
    assert.equal(statSync(shared).mode & 0o7777, 0o1777, "the shared directory keeps its mode");
    assert.deepEqual(readdirSync(shared), [], "no token, lock or log written there");
    assert.deepEqual(servicePids(dir), []);
  });

  it(".serve/log as a symbolic link: refused; the file it points at is not appended to", async () => {
    const dir = adapter(true);
    const victim = path.join(tmps.at(-1)!.path, "victim.txt");
    writeFileSync(victim, "precious\n");
    mkdirSync(path.join(dir, ".serve"), { mode: 0o700 });
    symlinkSync(victim, path.join(dir, ".serve", "log"));
    const r = await runHermit(["serve", dir], { input: initialize, timeoutMs: 60_000 });
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr, /^error: refusing .*\.serve\/log: it is a symbolic link/);
    assert.equal(readFileSync(victim, "utf8"), "precious\n");
    assert.deepEqual(servicePids(dir), []);
  });
});

const git = findTool("git");
const req = requirements([{ what: "git", ok: git !== undefined, fix: "apt-get install -y git" }]);

describe("runtime files and git", { skip: req.skip }, () => {
  const reaper = new Reaper();
  const tmps: { path: string; cleanup(): void }[] = [];
  after(async () => {
    for (const t of tmps) for (const p of servicePids(t.path)) reaper.track(p);
    await reaper.reap();
    for (const t of tmps) t.cleanup();
  });

  /** An adapter in a git repository with everything committed. */
  function repo(hostLaunch: boolean): string {
    req.assertReady();
    const tmp = tempDir();
    tmps.push(tmp);
    writeStandaloneAdapter(tmp.path, { hostLaunch });
    const g = (...args: string[]) =>
      execFileSync(git!, args, {
        cwd: tmp.path,
        env: {
          ...process.env,
          GIT_AUTHOR_NAME: "t",
          GIT_AUTHOR_EMAIL: "t@t",
          GIT_COMMITTER_NAME: "t",
          GIT_COMMITTER_EMAIL: "t@t",
        },
      });
    g("init", "-q");
    g("add", ".");
    g("commit", "-qm", "adapter");
    return tmp.path;
  }
  const status = (dir: string) =>
    spawnSync(git!, ["status", "--porcelain", "--untracked-files=all"], { cwd: dir, encoding: "utf8" })
      .stdout;

  it("a user-launched service, in a .serve/ an older hermit made without .gitignore: git status stays clean", async () => {
    const dir = repo(false);
    mkdirSync(path.join(dir, ".serve"), { mode: 0o700 });
    writeFileSync(path.join(dir, ".serve", "log"), "an old log\n", { mode: 0o600 });
    const svc = await startService(dir, {}, { reaper });
    try {
      assert.ok(existsSync(path.join(dir, ".serve", "endpoint")));
      assert.equal(status(dir), "");
    } finally {
      await svc.stop();
    }
  });

  it("a host-launched service (the lock, the log, the endpoint): git status stays clean", async () => {
    const dir = repo(true);
    const s = await connectServe(dir, { timeoutMs: 60_000 });
    reaper.track(s.pid);
    try {
      await s.client.listTools();
      const ep = await waitFor(() => readEndpointFile(dir), {
        timeoutMs: 30_000,
        what: "the launched service",
      });
      reaper.track(ep.pid);
      assert.ok(existsSync(path.join(dir, ".serve", "log")));
      assert.equal(status(dir), "", "no runtime file shows as a change");
      assert.equal(existsSync(path.join(dir, ".serve.lock")), false, "the lock is inside .serve/");
    } finally {
      await s.close();
    }
  });
});
