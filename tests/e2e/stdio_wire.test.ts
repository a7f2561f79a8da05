/**
 * The stdio wire, both ways, through the compiled binary and real processes (issue 12 items 13,
 * 14, 15): a host that writes lines that are not JSON-RPC 2.0 gets JSON-RPC 2.0 answers and the
 * session goes on; invalid params get -32602 in one readable line; an oversize request line gets
 * an error for its own id while a call in flight completes; an upstream result over the cap (a
 * real server-filesystem reading an 11 MB file) is capped at 2,000,000 characters and one over the
 * message limit becomes an error for that call, the upstream process untouched either way; an
 * upstream writing tens of MiB of stderr without a newline leaves hermit's memory flat and hermit
 * still ends when its host leaves. A host that closes hermit's stdout ends the session even with
 * stdin open; a last request without a newline before stdin ends is answered.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { after, before, describe, it } from "node:test";
import { fixtures, hermitArgv, hermitEnv, root } from "../helpers/hermit.ts";
import { connectServe, type HermitSession, textOf } from "../helpers/mcp.ts";
import { alive, cmdline, descendants, Reaper, waitFor } from "../helpers/procs.ts";
import { startService, writeStandaloneAdapter } from "../helpers/service.ts";
import { tempDir } from "../helpers/tmp.ts";

const linux = process.platform === "linux";
const NOISY = path.join(fixtures, "servers", "noisy.mjs");
const FILESYSTEM = path.join(
  root,
  "node_modules",
  "@modelcontextprotocol",
  "server-filesystem",
  "dist",
  "index.js",
);

type Answer = {
  jsonrpc: string;
  id: unknown;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
};

/** `hermit serve DIR` driven with raw lines, as a host (or an attacker) writes them. */
class RawServe {
  readonly child: ChildProcess;
  readonly answers: Answer[] = [];
  stderr = "";
  #partial = "";

  constructor(dir: string, env: Record<string, string> = {}) {
    const [cmd, ...pre] = hermitArgv();
    this.child = spawn(cmd, [...pre, "serve", dir], {
      env: hermitEnv({ ...process.env, ...env }) as Record<string, string>,
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      const lines = (this.#partial + d).split("\n");
      this.#partial = lines.pop()!;
      for (const l of lines) if (l.trim()) this.answers.push(JSON.parse(l));
    });
    this.child.stderr!.setEncoding("utf8").on("data", (d: string) => (this.stderr += d));
  }

  send(line: string | object): void {
    this.child.stdin!.write((typeof line === "string" ? line : JSON.stringify(line)) + "\n");
  }

  /** The answer with `id`, within the deadline. */
  answer(id: string | number, timeoutMs = 60_000): Promise<Answer> {
    return waitFor(() => this.answers.find((a) => a.id === id), { timeoutMs, what: `the answer to ${id}` });
  }

  /** The next answer after the first `n` (for answers with id null). */
  nth(n: number, timeoutMs = 30_000): Promise<Answer> {
    return waitFor(() => this.answers[n], { timeoutMs, what: `answer #${n + 1}; stderr: ${this.stderr}` });
  }

  async initialize(): Promise<void> {
    this.send({
      jsonrpc: "2.0",
      id: "init",
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
    });
    assert.ok((await this.answer("init", 90_000)).result, this.stderr);
    this.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  }
}

function commandAdapter(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const node = (code: string) => `[node, -e, ${JSON.stringify(code)}]`;
  writeFileSync(
    path.join(dir, "hermit.yaml"),
    [
      "name: wire",
      "exports: { tools: [echo, slow] }",
      "tools:",
      "  echo:",
      "    description: Echoes text",
      "    input: { type: object, properties: { text: { type: string } }, required: [text] }",
      `    run: ${
        node("let s='';process.stdin.on('data',d=>s+=d).on('end',()=>console.log(JSON.parse(s).text.length))")
      }`,
      "    read_only: true",
      "  slow:",
      "    description: Answers after two seconds",
      `    run: ${node("setTimeout(()=>console.log('slow done'),2000)")}`,
      "    read_only: true",
    ].join("\n") + "\n",
  );
  return dir;
}

describe("stdio: invalid input gets JSON-RPC 2.0 answers and the session goes on (item 15)", () => {
  const tmp = tempDir("hermit-wire-");
  const reaper = new Reaper();
  let s: RawServe;
  before(() => {
    s = new RawServe(commandAdapter(path.join(tmp.path, "a")));
    reaper.track(s.child.pid);
  });
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  const cases: [string, string, number, unknown, RegExp][] = [
    ["a line that is not JSON", "this is not json", -32700, null, /^Parse error: not JSON/],
    ["an empty array", "[]", -32600, null, /^Invalid request: an empty array is not a request$/],
    ["a number", "42", -32600, null, /^Invalid request: a JSON number is not a request$/],
    ["a batch", '[{"jsonrpc":"2.0","id":9,"method":"ping"}]', -32600, null, /batches are not supported/],
    [
      '"jsonrpc": "1.0"',
      '{"jsonrpc":"1.0","id":5,"method":"ping"}',
      -32600,
      5,
      /"jsonrpc" must be "2\.0", not "1\.0"/,
    ],
    ["no jsonrpc", '{"id":6,"method":"ping"}', -32600, 6, /"jsonrpc" must be "2\.0"/],
    [
      "a null id",
      '{"jsonrpc":"2.0","id":null,"method":"ping"}',
      -32600,
      null,
      /"id" must be a string or a number/,
    ],
  ];
  for (const [what, line, code, id, message] of cases) {
    it(`${what} before initialize: answered ${code}, id ${JSON.stringify(id)}`, async () => {
      const n = s.answers.length;
      s.send(line);
      const a = await s.nth(n);
      assert.equal(a.jsonrpc, "2.0");
      assert.equal(a.id, id);
      assert.equal(a.error?.code, code, JSON.stringify(a));
      assert.match(a.error!.message, message);
      assert.equal(a.error!.message.split("\n").length, 1);
    });
  }

  it("then initializes and serves normally, and says what it refused on stderr", async () => {
    await s.initialize();
    s.send({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "echo", arguments: { text: "abc" } },
    });
    assert.equal(textOf((await s.answer(1)).result), "3");
    assert.match(s.stderr, /the host sent a line that is not JSON .*; answered with a parse error/);
    assert.match(s.stderr, /the host sent an invalid request \("jsonrpc" must be "2\.0"/);
  });

  it("invalid params: -32602 and one readable line, no dump of schema issues", async () => {
    s.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: 42 } });
    s.send({ jsonrpc: "2.0", id: 3, method: "tools/call" });
    s.send({ jsonrpc: "2.0", id: 4, method: "resources/read", params: { uri: ["x"] } });
    const two = await s.answer(2);
    assert.deepEqual(two.error, {
      code: -32602,
      message: "Invalid params for tools/call: params.name: expected string, received number",
    });
    const three = await s.answer(3);
    assert.equal(three.error?.code, -32602);
    assert.match(
      three.error!.message,
      /^Invalid params for tools\/call: params: expected object, received undefined$/,
    );
    assert.equal((await s.answer(4)).error?.code, -32602);
  });

  it("an unknown method is -32601, and the session still serves", async () => {
    s.send({ jsonrpc: "2.0", id: "unknown", method: "no/such" });
    assert.equal((await s.answer("unknown")).error?.code, -32601);
    s.send({ jsonrpc: "2.0", id: "ping", method: "ping" });
    assert.deepEqual((await s.answer("ping")).result, {});
    assert.equal(s.child.exitCode, null);
  });
});

describe("stdio: the host's end of the pipes", () => {
  const tmp = tempDir("hermit-wire-end-");
  const reaper = new Reaper();
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  it("a host that closes hermit's stdout but keeps stdin open ends the session (the call in flight too)", async () => {
    const s = new RawServe(commandAdapter(path.join(tmp.path, "a")));
    reaper.track(s.child.pid);
    await s.initialize();
    s.send({ jsonrpc: "2.0", id: "slow", method: "tools/call", params: { name: "slow", arguments: {} } });
    s.child.stdout!.destroy(); // the host stops reading; stdin stays open
    s.send({ jsonrpc: "2.0", id: "ping", method: "ping" });
    await waitFor(() => s.child.exitCode !== null || s.child.signalCode !== null || undefined, {
      timeoutMs: 20_000,
      what: () => `serve to end (stderr: ${s.stderr})`,
    });
    assert.equal(s.child.exitCode, 0, s.stderr);
    assert.match(
      s.stderr,
      /the host closed hermit's stdout \((EPIPE|ERR_STREAM_DESTROYED)\): the session ends/,
    );
  });

  it("a last request without a newline before stdin ends is answered", async () => {
    const s = new RawServe(commandAdapter(path.join(tmp.path, "b")));
    reaper.track(s.child.pid);
    await s.initialize();
    s.child.stdin!.end(JSON.stringify({ jsonrpc: "2.0", id: "last", method: "ping" }));
    assert.deepEqual((await s.answer("last", 30_000)).result, {});
  });
});

describe("stdio: the relay answers invalid input too, and the service answers invalid params", () => {
  const tmp = tempDir("hermit-wire-");
  const reaper = new Reaper();
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  it("not JSON, -32700; jsonrpc 1.0, -32600; tools/call with a numeric name, -32602 from the service", async () => {
    writeStandaloneAdapter(tmp.path, { hostLaunch: false });
    const svc = await startService(tmp.path, {}, { reaper });
    const s = new RawServe(tmp.path);
    reaper.track(s.child.pid);
    s.send("this is not json");
    assert.deepEqual((await s.nth(0)).error?.code, -32700);
    s.send('{"jsonrpc":"1.0","id":"old","method":"ping"}');
    assert.equal((await s.answer("old")).error?.code, -32600);
    await s.initialize();
    s.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: 42 } });
    assert.deepEqual((await s.answer(2)).error, {
      code: -32602,
      message: "Invalid params for tools/call: params.name: expected string, received number",
    });
    s.send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "read_graph", arguments: {} } });
    assert.ok((await s.answer(3)).result, s.stderr);
    await svc.stop();
  });
});

describe("stdio: an oversize request line is an error for that request; serve goes on (item 14)", () => {
  const tmp = tempDir("hermit-wire-");
  const reaper = new Reaper();
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  it("an 11 MiB request: answered with an error naming the limit; the call in flight completes", async () => {
    const s = new RawServe(commandAdapter(path.join(tmp.path, "a")));
    reaper.track(s.child.pid);
    await s.initialize();
    s.send({ jsonrpc: "2.0", id: "slow", method: "tools/call", params: { name: "slow", arguments: {} } });
    const text = "x".repeat(11 * 1024 * 1024);
    // the TypeScript SDK's order (id last) and the usual one (id first)
    s.send(
      `{"method":"tools/call","params":{"name":"echo","arguments":{"text":"${text}"}},"jsonrpc":"2.0","id":11}`,
    );
    s.send(
      `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo","arguments":{"text":"${text}"}}}`,
    );
    s.send({ jsonrpc: "2.0", id: 13, method: "ping" });
    for (const id of [11, 12]) {
      const a = await s.answer(id);
      assert.equal(a.error?.code, -32600, JSON.stringify(a).slice(0, 300));
      assert.match(
        a.error!.message,
        /^the tools\/call request is 11\.0 MiB, over hermit's limit of 10 MiB per message; send less/,
      );
    }
    assert.deepEqual((await s.answer(13)).result, {});
    assert.equal(textOf((await s.answer("slow")).result), "slow done");
    assert.match(
      s.stderr,
      /the host sent a message of 11\.0 MiB, over hermit's limit of 10 MiB per message \(tools\/call\); not read/,
    );
    assert.equal(s.child.exitCode, null, "serve is still running");
    s.child.stdin!.end();
    await waitFor(() => s.child.exitCode !== null, { timeoutMs: 30_000, what: "serve to end with its host" });
    assert.equal(s.child.exitCode, 0);
  });
});

/** The pid of the upstream server process under `hermit` whose command line holds `marker`. */
function upstreamPid(hermit: number, marker: string): number | undefined {
  return descendants(hermit).find((p) => cmdline(p).includes(marker));
}

describe("an upstream's oversize result is capped or refused; the connection lives on (item 14)", () => {
  const tmp = tempDir("hermit-wire-");
  const reaper = new Reaper();
  let s: HermitSession;
  before(async () => {
    const files = path.join(tmp.path, "files");
    mkdirSync(files);
    // 11 MB of text in lines, a head and a tail that can be told apart
    const body = Array.from(
      { length: 150_000 },
      (_, i) => `line ${String(i).padStart(6, "0")} ${"y".repeat(60)}`,
    )
      .join("\n");
    writeFileSync(path.join(files, "big.txt"), `HEAD\n${body}\nTAIL\n`);
    writeFileSync(
      path.join(tmp.path, "hermit.yaml"),
      [
        "name: big",
        "exports: { tools: [read_text_file, list_directory, enormous, pid, echo] }",
        "mcp_servers:",
        `  fs: { command: node, args: [${JSON.stringify(FILESYSTEM)}, ${JSON.stringify(files)}] }`,
        `  noisy: { command: node, args: [${JSON.stringify(NOISY)}] }`,
      ].join("\n") + "\n",
    );
    s = await connectServe(tmp.path, { cwd: tmp.path });
    reaper.track(s.pid);
  });
  after(async () => {
    await s?.close();
    await reaper.reap();
    tmp.cleanup();
  });

  it("server-filesystem reading an 11 MB file: the result capped at 2,000,000 characters, the server not restarted", async () => {
    const before = upstreamPid(s.pid, FILESYSTEM);
    assert.ok(before, "server-filesystem runs");
    const r = await s.client.callTool(
      { name: "read_text_file", arguments: { path: path.join(tmp.path, "files", "big.txt") } },
      undefined,
      { timeout: 120_000 },
    );
    const t = (r.content as { text: string }[])[0].text;
    assert.equal(r.isError, undefined, t.slice(0, 300));
    assert.ok(t.length >= 2_000_000 && t.length < 2_000_100, `${t.length} characters`);
    assert.ok(t.startsWith("HEAD\nline 000000 "), t.slice(0, 40));
    assert.ok(t.trimEnd().endsWith("TAIL"), t.slice(-40));
    assert.match(t, /\[… \d+ characters removed by hermit …\]/);
    // its structured copy of the same 11 MB is over the cap too: replaced by a notice
    assert.equal(r.structuredContent, undefined);
    assert.match(textOf(r), /\[structured content of \d+ characters dropped by hermit: over the size cap\]$/);
    const listed = await s.client.callTool({
      name: "list_directory",
      arguments: { path: path.join(tmp.path, "files") },
    });
    assert.match(textOf(listed), /big\.txt/);
    assert.equal(upstreamPid(s.pid, FILESYSTEM), before, "the same server process");
    assert.doesNotMatch(s.stderr(), /connection lost|reconnecting/);
  });

  it("a 70 MiB result (over the 64 MiB message limit): an error for that call, the next call works", async () => {
    const pid = textOf(await s.client.callTool({ name: "pid", arguments: {} }));
    const r = await s.client.callTool({ name: "enormous", arguments: { mib: 70 } }, undefined, {
      timeout: 120_000,
    });
    assert.equal(r.isError, true);
    assert.match(
      textOf(r),
      /^the server answered with a message of 70\.0 MiB, over hermit's limit of 64 MiB$/,
    );
    assert.equal(
      textOf(await s.client.callTool({ name: "echo", arguments: { text: "still" } })),
      "echo: still",
    );
    assert.equal(
      textOf(await s.client.callTool({ name: "pid", arguments: {} })),
      pid,
      "the same server process",
    );
    assert.match(
      s.stderr(),
      /mcp_servers\.noisy: the server sent a message of 70\.0 MiB, over hermit's limit of 64 MiB; dropped/,
    );
  });
});

/** Resident memory of `pid` in MiB (Linux). */
function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
}

describe("an upstream's stderr without newlines (item 13)", { skip: !linux && "reads /proc" }, () => {
  const tmp = tempDir("hermit-wire-");
  const reaper = new Reaper();
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  function noisyAdapter(dir: string): string {
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      path.join(dir, "hermit.yaml"),
      `name: noisy\nexports: { tools: [flood, echo] }\nmcp_servers:\n  noisy: { command: node, args: [${
        JSON.stringify(NOISY)
      }], env: { NOISY_DONE: "${path.join(dir, "done")}" } }\n`,
    );
    return dir;
  }

  it("60 MiB on one line: hermit's memory stays flat and the line reaches the log cut", async () => {
    const dir = noisyAdapter(path.join(tmp.path, "once"));
    const s = await connectServe(dir, { cwd: dir, env: { HERMIT_LOG: "info" } });
    reaper.track(s.pid);
    try {
      await s.client.callTool({ name: "echo", arguments: { text: "warm" } });
      const base = rssMiB(s.pid);
      await s.client.callTool({ name: "flood", arguments: { mib: 60 } });
      await waitFor(() => existsSync(path.join(dir, "done")), {
        timeoutMs: 120_000,
        what: "60 MiB of stderr read",
      });
      assert.equal(
        textOf(await s.client.callTool({ name: "echo", arguments: { text: "alive" } })),
        "echo: alive",
      );
      const grew = rssMiB(s.pid) - base;
      assert.ok(grew < 100, `hermit grew by ${grew.toFixed(0)} MiB reading 60 MiB of stderr`);
    } finally {
      await s.close();
    }
  });

  it("an endless stderr line: hermit still ends when its host leaves, and stops the server", async () => {
    const dir = noisyAdapter(path.join(tmp.path, "forever"));
    const s = await connectServe(dir, { cwd: dir });
    reaper.track(s.pid);
    const server = upstreamPid(s.pid, NOISY);
    assert.ok(server);
    await s.client.callTool({ name: "flood", arguments: { forever: true } });
    await new Promise((r) => setTimeout(r, 3000)); // let tens of MiB through
    await s.client.close(); // the host leaves: stdin closes
    await waitFor(() => !alive(s.pid), { timeoutMs: 60_000, what: "hermit to end after its host left" });
    await waitFor(() => !alive(server!), { timeoutMs: 20_000, what: "the flooding server to be stopped" });
  });
});
