/**
 * Nothing hermit starts may outlive it: kill -9 of the host (hermit sees stdin close and stops its
 * children), and kill -9 of `hermit serve` itself (the watchdog, told at once by EOF on its stdin,
 * reaps the groups), with an upstream launched through `npx`, which leaves wrapper descendants (npm
 * exec → node). And a host that dies with a request unanswered while serve still starts its upstreams
 * (a Ctrl-C of `hermit check`, a host that crashes): serve answers into a pipe nobody reads, and
 * must still end at once rather than wait out its 30 s drain for an answer that cannot go out.
 * And a host that closes stdin while a call runs, then sends SIGTERM (the MCP spec's shutdown:
 * close, wait, SIGTERM, SIGKILL): the drain ends on the signal, and the call's process with it.
 * And a host that reuses the id of a call in flight, then closes stdin: the drain still waits for
 * the first call (the refusal of the second is not its answer).
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fixtures, hermitBin, hermitEnv } from "../helpers/hermit.ts";
import { alive, allProcesses, cmdline, descendants, kill, Reaper, waitFor } from "../helpers/procs.ts";
import { mcpInput } from "../helpers/rootfs.ts";
import { tempDir } from "../helpers/tmp.ts";

const HOST = `
import { spawn } from "node:child_process";
const [bin, dir] = process.argv.slice(2);
const child = spawn(bin, ["serve", dir], { stdio: ["pipe", "pipe", "inherit"] });
child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "host", version: "0" } } }) + "\\n");
child.stdout.once("data", () => console.log(child.pid));
setInterval(() => {}, 1 << 30);
`;

function adapter(dir: string): void {
  writeFileSync(
    path.join(dir, "hermit.yaml"),
    `name: faults
exports: { tools: [read_graph] }
mcp_servers:
  memory:
    command: npx
    args: [-y, "@modelcontextprotocol/server-memory@2026.8.31"]
    env: { MEMORY_FILE_PATH: "\${workspaceFolder}/graph.jsonl" }
    tools: { include: [read_graph], resources: false }
`,
  );
  writeFileSync(path.join(dir, "host.mjs"), HOST);
}

/**
 * Start a host process running hermit serve; resolves with both pids once hermit has answered, and
 * the stderr hermit and its watchdog share (the host's).
 */
async function startHost(
  dir: string,
  reaper: Reaper,
): Promise<{ host: number; hermit: number; stderr(): string }> {
  const host = spawn("node", [path.join(dir, "host.mjs"), hermitBin(), dir], {
    cwd: dir,
    env: hermitEnv() as Record<string, string>,
    stdio: ["ignore", "pipe", "pipe"],
  });
  reaper.track(host.pid);
  let out = "";
  let err = "";
  host.stdout.setEncoding("utf8").on("data", (d) => (out += d));
  host.stderr.setEncoding("utf8").on("data", (d) => (err += d));
  const hermit = await waitFor(() => Number(out.trim()) || undefined, {
    timeoutMs: 90_000,
    what: () => `hermit to answer initialize (stderr: ${err})`,
  });
  reaper.track(hermit);
  return { host: host.pid!, hermit, stderr: () => err };
}

function watchdogOf(hermit: number): number | undefined {
  return allProcesses().find((p) => cmdline(p.pid).includes(`watchdog --ppid ${hermit} --supervise`))?.pid;
}

function serverNode(hermit: number): number | undefined {
  return descendants(hermit).find((p) =>
    cmdline(p).includes("server-memory") && !cmdline(p).includes("npm exec")
  );
}

describe("serve: process hygiene", () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  adapter(tmp.path);
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  it("kill -9 of the host leaves no process of hermit's tree behind", async () => {
    const { host, hermit } = await startHost(tmp.path, reaper);
    await waitFor(() => serverNode(hermit), { timeoutMs: 30_000, what: "the npx upstream to run" });
    const wd = await waitFor(() => watchdogOf(hermit), { timeoutMs: 5000, what: "the watchdog" });
    const tree = [hermit, ...descendants(hermit), wd];
    assert.ok(tree.length >= 4, `hermit, npm exec, node and the watchdog: ${tree.map(cmdline).join(" | ")}`);
    for (const p of tree) reaper.track(p);
    kill(host, "SIGKILL");
    await waitFor(() => tree.every((p) => !alive(p)), {
      timeoutMs: 10_000,
      what: () => `every process to exit (left: ${tree.filter(alive).map(cmdline).join(" | ")})`,
    });
  });

  it("kill -9 of hermit serve: the watchdog reaps the upstream's whole group", async () => {
    const { hermit, stderr } = await startHost(tmp.path, reaper);
    await waitFor(() => serverNode(hermit), { timeoutMs: 30_000, what: "the npx upstream to run" });
    const wd = await waitFor(() => watchdogOf(hermit), { timeoutMs: 5000, what: "the watchdog" });
    const upstream = descendants(hermit).filter((p) => p !== wd);
    assert.ok(upstream.length >= 2, "npm exec and node");
    for (const p of [...upstream, wd]) reaper.track(p);
    kill(hermit, "SIGKILL");
    await waitFor(() => [...upstream, wd].every((p) => !alive(p)), {
      timeoutMs: 10_000,
      what: () =>
        `the upstream group and the watchdog to exit (left: ${
          [...upstream, wd].filter(alive).map(cmdline).join(" | ")
        })`,
    });
    // how the watchdog learned of the death: EOF on its stdin ("closed the pipe"), at once, not its
    // next poll of the parent ("is gone")
    const how = await waitFor(
      () => new RegExp(`watchdog: parent ${hermit} (closed the pipe|is gone)`).exec(stderr())?.[1],
      {
        timeoutMs: 5000,
        what: () => `the watchdog's log line (stderr: ${stderr()})`,
      },
    );
    assert.equal(how, "closed the pipe", stderr());
  });
});

describe("serve: a host gone before its request is answered", () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  // an upstream that takes 2 s to answer anything: the host's initialize waits in serve's stdin
  writeFileSync(
    path.join(tmp.path, "hermit.yaml"),
    `name: slow
exports: { tools: [echo] }
mcp_servers:
  slow:
    command: node
    args: [${JSON.stringify(path.join(fixtures, "servers", "scripted.mjs"))}]
    env: { START_DELAY_MS: "2000" }
`,
  );
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  it("kill -9 of the host while serve starts: serve and its upstream end within seconds", async () => {
    const host = spawn(
      "node",
      [
        "-e",
        `const c = require("node:child_process").spawn(process.argv[1], ["serve", process.argv[2]], { stdio: ["pipe", "pipe", "inherit"] });
c.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "host", version: "0" } } }) + "\\n");
console.log(c.pid);
setInterval(() => {}, 1 << 30);`,
        hermitBin(),
        tmp.path,
      ],
      { cwd: tmp.path, env: hermitEnv() as Record<string, string>, stdio: ["ignore", "pipe", "pipe"] },
    );
    reaper.track(host.pid);
    let out = "";
    host.stdout.setEncoding("utf8").on("data", (d) => (out += d));
    const hermit = await waitFor(() => Number(out.trim()) || undefined, {
      timeoutMs: 10_000,
      what: "serve's pid",
    });
    reaper.track(hermit);
    const upstream = await waitFor(
      () => descendants(hermit).find((p) => cmdline(p).includes("scripted.mjs")),
      { timeoutMs: 10_000, what: "the upstream to start" },
    );
    reaper.track(upstream);
    kill(host.pid!, "SIGKILL");
    // the upstream answers at 2 s; serve then reads the initialize, answers into a dead pipe, sees EOF
    await waitFor(() => !alive(hermit) && !alive(upstream), {
      timeoutMs: 10_000,
      what: () =>
        `serve and its upstream to exit (left: ${[hermit, upstream].filter(alive).map(cmdline).join(" | ")})`,
    });
  });

  it("SIGTERM during the drain after stdin closed ends serve at once, its running call's process too", async () => {
    const dir = path.join(tmp.path, "drain");
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      path.join(dir, "hermit.yaml"),
      `name: drain\nexports: { tools: [wait] }\ntools:\n  wait:\n    description: waits\n` +
        `    input: { type: object }\n    run: [sleep, "120"]\n    timeout: 300\n`,
    );
    const child = spawn(hermitBin(), ["serve", dir], {
      env: { ...hermitEnv(), HERMIT_LOG: "debug" } as Record<string, string>,
      stdio: ["pipe", "pipe", "pipe"],
    });
    reaper.track(child.pid);
    let err = "";
    child.stderr.setEncoding("utf8").on("data", (d) => (err += d));
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.stdin.write(mcpInput([{ method: "tools/call", params: { name: "wait", arguments: {} } }]));
    const sleeper = await waitFor(
      () => descendants(child.pid!).find((p) => /(^|\/)sleep 120$/.test(cmdline(p))),
      { timeoutMs: 30_000, what: () => `the tool's sleep to run (stderr: ${err})` },
    );
    reaper.track(sleeper);
    child.stdin.end(); // the drain starts: serve waits for the running call (up to 30 s)
    await waitFor(() => /session ends: the host closed stdin/.test(err) || !alive(child.pid!), {
      timeoutMs: 10_000,
      what: () => `serve to see stdin close (stderr: ${err})`,
    });
    kill(child.pid!, "SIGTERM");
    await waitFor(() => !alive(child.pid!), {
      timeoutMs: 12_000,
      what: () => `serve to end on SIGTERM during its drain (stderr: ${err})`,
    });
    await exited;
    await waitFor(() => !alive(sleeper), {
      timeoutMs: 5000,
      what: "the running call's process to be stopped",
    });
  });

  it("a host that reuses an id in flight, then closes stdin: the first call is still waited for", async () => {
    const dir = path.join(tmp.path, "reused-id");
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      path.join(dir, "hermit.yaml"),
      `name: reused\nexports: { tools: [slow] }\ntools:\n  slow:\n    description: answers in 2 s\n` +
        `    input: { type: object }\n    run: [sh, -c, "sleep 2; echo finished"]\n    timeout: 60\n`,
    );
    const child = spawn(hermitBin(), ["serve", dir], {
      env: hermitEnv() as Record<string, string>,
      stdio: ["pipe", "pipe", "pipe"],
    });
    reaper.track(child.pid);
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (out += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (err += d));
    const exited = new Promise((resolve) => child.once("exit", resolve));
    const call = { method: "tools/call", params: { name: "slow", arguments: {} } };
    child.stdin.write(mcpInput([call])); // the call is id 2
    await waitFor(() => descendants(child.pid!).some((p) => cmdline(p).includes("sleep 2")), {
      timeoutMs: 30_000,
      what: () => `the call to run (stderr: ${err})`,
    });
    // the same id again while the first runs (refused), then the host closes stdin
    child.stdin.end(JSON.stringify({ jsonrpc: "2.0", id: 2, ...call }) + "\n");
    await exited;
    const answers = out.split("\n").filter(Boolean).map((l) => JSON.parse(l)).filter((a) => a.id === 2);
    assert.match(JSON.stringify(answers), /is in use by a call in flight/, out);
    assert.match(
      JSON.stringify(answers),
      /finished/,
      `the first call's answer (stdout: ${out}; stderr: ${err})`,
    );
  });
});
