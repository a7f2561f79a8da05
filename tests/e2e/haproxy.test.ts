/**
 * Two replicas behind HAProxy from Debian, configured by the repository's own `deploy/haproxy.cfg`
 * (the file the README shows; the test only sets the three addresses it reads from the
 * environment). Health checks bring both up; sessions are sticky (every call of a session is
 * counted by the replica that created it, and only by it) and new sessions spread over both; a
 * rolling restart of both replicas under a steady stream of write calls from relays attached
 * through the balancer loses no call, runs none twice and answers none "outcome uncertain", and
 * each replica exits 0; kill -9 of the replica a relay's session lives on: the relay reattaches
 * to the survivor, the read in flight is retried, the write in flight is "outcome uncertain",
 * and the session goes on.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { hermitBin, hermitEnv, root } from "../helpers/hermit.ts";
import { findTool, requirements } from "../helpers/rootfs.ts";
import { alive, cmdline, descendants, kill, Reaper, waitFor } from "../helpers/procs.ts";
import {
  connectHttp,
  endHttp,
  endpointOf,
  freePort,
  launchHermit,
  writeServiceAdapter,
} from "../helpers/service.ts";
import { tempDir } from "../helpers/tmp.ts";

const haproxy = findTool("haproxy", ["/usr/sbin", "/usr/local/sbin"]);
const req = requirements([{ what: "haproxy", ok: !!haproxy, fix: "apt-get install -y haproxy" }]);
const CONFIG = path.join(root, "deploy", "haproxy.cfg");

function writeAdapter(dir: string, record: string): void {
  writeServiceAdapter(
    dir,
    "replicated",
    `exports: { tools: [record, slow_read, slow_write] }
tools:
  record:
    description: appends its id to a shared file
    input: { type: object, properties: { id: { type: string } }, required: [id] }
    run: [sh, -c, 'sleep 0.05; read -r a; printf "%s\\n" "$a" >> ${record} && echo recorded']
    timeout: 30
    sandbox: { write: [${JSON.stringify(record)}] }
  slow_read: { description: waits, run: [sleep, "4"], read_only: true, timeout: 30 }
  slow_write: { description: waits, run: [sleep, "4"], timeout: 30 }
`,
  );
}

class Replica {
  #svc?: ReturnType<typeof launchHermit>;
  constructor(
    readonly dir: string,
    readonly port: number,
    readonly tokenFile: string,
    readonly reaper: Reaper,
  ) {}

  get pid(): number {
    return this.#svc!.pid;
  }

  get exited(): Promise<number | string | null> {
    return this.#svc!.exited;
  }

  async start(): Promise<void> {
    const svc = launchHermit(
      ["serve", this.dir, "--standalone", "--port", String(this.port), "--token-file", this.tokenFile],
      this.reaper,
    );
    this.#svc = svc;
    await endpointOf(this.dir, svc.pid, svc.stderr);
  }

  stderr(): string {
    return this.#svc?.stderr() ?? "";
  }

  /** The operator's /health: with the token, straight from this replica. */
  async health(
    token: string,
  ): Promise<{ status: string; sessions: { session: string; requests: number }[] }> {
    const res = await fetch(`http://127.0.0.1:${this.port}/health`, {
      headers: { authorization: `Bearer ${token}` },
    });
    return await res.json();
  }
}

/** A relay as a host runs it (`hermit serve DIR --serve-url LB`), driven by an MCP client. */
async function relay(dir: string, url: string, tokenFile: string, reaper: Reaper) {
  const transport = new StdioClientTransport({
    command: hermitBin(),
    args: ["serve", dir, "--serve-url", url, "--token-file", tokenFile],
    env: hermitEnv() as Record<string, string>,
    stderr: "pipe",
  });
  let err = "";
  transport.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  const client = new Client({ name: "host", version: "0" });
  await client.connect(transport, { timeout: 60_000 });
  reaper.track(transport.pid ?? undefined);
  return { client, pid: transport.pid!, stderr: () => err };
}

const text = (r: unknown) =>
  ((r as { content?: { text?: string }[] }).content ?? []).map((c) => c.text ?? "").join("");

describe("two replicas behind HAProxy (deploy/haproxy.cfg)", { skip: req.skip }, () => {
  const tmp = tempDir("hermit-haproxy-");
  const reaper = new Reaper();
  const token = "replica-token-" + Math.random().toString(36).slice(2) + "x".repeat(16);
  const tokenFile = path.join(tmp.path, "token");
  const record = path.join(tmp.path, "record.log");
  const replicas: Replica[] = [];
  let lb = "";

  before(async () => {
    req.assertReady();
    writeFileSync(tokenFile, token + "\n", { mode: 0o600 });
    writeFileSync(record, "");
    for (const name of ["r1", "r2", "client"]) writeAdapter(path.join(tmp.path, name), record);
    for (const name of ["r1", "r2"]) {
      replicas.push(new Replica(path.join(tmp.path, name), await freePort(), tokenFile, reaper));
    }
    await Promise.all(replicas.map((r) => r.start()));
    const lbPort = await freePort();
    lb = `http://127.0.0.1:${lbPort}/mcp`;
    const proxy = spawn(haproxy!, ["-db", "-f", CONFIG], {
      env: {
        ...process.env,
        HERMIT_LISTEN: `127.0.0.1:${lbPort}`,
        HERMIT_REPLICA_1: `127.0.0.1:${replicas[0].port}`,
        HERMIT_REPLICA_2: `127.0.0.1:${replicas[1].port}`,
      },
      stdio: ["ignore", "ignore", "pipe"],
    });
    reaper.track(proxy.pid);
    let proxyErr = "";
    proxy.stderr!.setEncoding("utf8").on("data", (d) => (proxyErr += d));
    // both replicas up in HAProxy's checks: a new session lands on each
    await waitFor(async () => (await fetch(new URL("/health", lb))).status === 200, {
      timeoutMs: 30_000,
      what: () => `HAProxy to see a replica up (stderr: ${proxyErr})`,
    });
  });
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  const sessionsOn = async (r: Replica) => (await r.health(token)).sessions;

  /** Open sessions through the balancer until one lands on `r` (HAProxy has it up again). */
  async function untilServing(r: Replica): Promise<void> {
    await waitFor(async () => {
      const c = await connectHttp({ url: lb, token });
      const sid = (c.transport as StreamableHTTPClientTransport).sessionId!;
      const here = (await sessionsOn(r)).some((s) => sid.startsWith(s.session));
      await endHttp(c);
      return here;
    }, { timeoutMs: 30_000, intervalMs: 200, what: `HAProxy to send sessions to replica ${r.port}` });
  }

  it("the README shows this very file", () => {
    assert.ok(readFileSync(path.join(root, "README.md"), "utf8").includes(readFileSync(CONFIG, "utf8")));
  });

  it("health checks up, sessions sticky (each replica counts only its own), new sessions on both", async () => {
    const clients = await Promise.all(Array.from({ length: 6 }, () => connectHttp({ url: lb, token })));
    for (let i = 0; i < 20; i++) {
      await Promise.all(
        clients.map((c, k) => c.callTool({ name: "record", arguments: { id: `sticky-${k}-${i}` } })),
      );
    }
    const held = await Promise.all(replicas.map(sessionsOn));
    for (const c of clients) {
      const sid = (c.transport as StreamableHTTPClientTransport).sessionId!;
      const where = held.map((list) => list.find((s) => sid.startsWith(s.session)));
      assert.equal(where.filter(Boolean).length, 1, `session ${sid} is on exactly one replica`);
      // initialize, tools/list (the SDK client learns output schemas on its first call), 20 calls
      assert.ok(where.find(Boolean)!.requests >= 21, JSON.stringify(where));
    }
    assert.ok(held.every((list) => list.length >= 2), `new sessions on both: ${held.map((l) => l.length)}`);
    await Promise.all(clients.map(endHttp));
  });

  it("rolling restart under a steady stream of writes from relays: no call lost, none twice, none uncertain; exit 0", async () => {
    const hosts = await Promise.all(
      [0, 1, 2].map(() => relay(path.join(tmp.path, "client"), lb, tokenFile, reaper)),
    );
    let running = true;
    const sent: string[] = [];
    const failures: string[] = [];
    const loops = hosts.flatMap((h, k) =>
      [0, 1].map(async (lane) => {
        for (let i = 0; running; i++) {
          const id = `roll-${k}-${lane}-${i}`;
          sent.push(id);
          try {
            const r = await h.client.callTool({ name: "record", arguments: { id } }, undefined, {
              timeout: 120_000,
            });
            if (r.isError || text(r) !== "recorded") failures.push(`${id}: ${JSON.stringify(r)}`);
          } catch (err) {
            failures.push(`${id}: ${err}`);
          }
        }
      })
    );
    const calls = () => sent.length;
    for (const r of replicas) {
      const before = calls();
      await waitFor(() => calls() > before + 20, { timeoutMs: 60_000, what: "calls to flow" });
      process.kill(r.pid, "SIGTERM");
      assert.equal(await r.exited, 0, r.stderr());
      await r.start();
      await untilServing(r);
    }
    const before = calls();
    await waitFor(() => calls() > before + 20, {
      timeoutMs: 60_000,
      what: "calls to flow after the restarts",
    });
    running = false;
    await Promise.all(loops);
    assert.deepEqual(failures, [], hosts.map((h) => h.stderr()).join("\n---\n"));
    const recorded = readFileSync(record, "utf8").split("\n").filter((l) => l.includes("roll-")).map((l) =>
      JSON.parse(l).id as string
    );
    const counts = new Map<string, number>();
    for (const id of recorded) counts.set(id, (counts.get(id) ?? 0) + 1);
    assert.deepEqual([...counts].filter(([, n]) => n > 1), [], "no call ran twice");
    assert.deepEqual(sent.filter((id) => !counts.has(id)), [], "every call ran");
    for (const h of hosts) await h.client.close();
  });

  it("kill -9 of the replica holding a relay's session: reattach to the survivor, read retried, write uncertain", async () => {
    const h = await relay(path.join(tmp.path, "client"), lb, tokenFile, reaper);
    await h.client.listTools(); // the relay learns which tools are read-only
    const read = h.client.callTool({ name: "slow_read", arguments: {} });
    const write = h.client.callTool({ name: "slow_write", arguments: {} });
    const holder = await waitFor(
      () =>
        replicas.find((r) =>
          alive(r.pid) && descendants(r.pid).filter((p) => /(^|\/)sleep 4$/.test(cmdline(p))).length === 2
        ),
      { timeoutMs: 30_000, what: "both slow calls to run on one replica" },
    );
    kill(holder.pid, "SIGKILL");
    const [w, r] = await Promise.allSettled([write, read]);
    assert.equal(w.status, "rejected");
    assert.match(String((w as PromiseRejectedResult).reason), /outcome uncertain/);
    assert.equal(r.status, "fulfilled", String((r as PromiseRejectedResult).reason ?? ""));
    assert.equal((r as PromiseFulfilledResult<{ isError?: boolean }>).value.isError, undefined);
    const after = await h.client.callTool({ name: "record", arguments: { id: "after-kill" } });
    assert.equal(text(after), "recorded", "the host's session goes on");
    await h.client.close();
  });
});
