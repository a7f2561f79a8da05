/**
 * `hermit serve` from the compiled binary, driven by the real MCP SDK client: command tools, and
 * real upstream servers from npm (memory, everything) with progress, resources, prompts, a
 * reconnect after the upstream is killed, and an idle recycle.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { examples } from "../helpers/hermit.ts";
import { connectServe, type HermitSession, textOf } from "../helpers/mcp.ts";
import { alive, cmdline, descendants, groupMembers, kill, Reaper, waitFor } from "../helpers/procs.ts";
import { requirements, toolNeeds } from "../helpers/requirements.ts";
import { copyAdapter, tempDir } from "../helpers/tmp.ts";

const MEMORY = '"@modelcontextprotocol/server-memory@2026.8.31"';
const EVERYTHING = '"@modelcontextprotocol/server-everything@2026.8.31"';

function upstreamPid(hermitPid: number, marker: string): number | undefined {
  // the node process of the server (npx leaves an `npm exec` wrapper above it)
  return descendants(hermitPid).find((p) => cmdline(p).includes(marker) && !cmdline(p).includes("npm exec"));
}

// the notes example's tools are Python programs
const python = requirements(
  toolNeeds({ python3: "python3" }),
  "serve: command tools (the notes example's tools)",
);

describe("serve: command tools", () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  let s: HermitSession;
  let dir: string;

  before(async () => {
    dir = copyAdapter(path.join(examples, "notes"), tmp.path);
    writeFileSync(
      path.join(dir, "hermit.yaml"),
      readFileSync(path.join(dir, "hermit.yaml"), "utf8")
        .replace(
          "tools: [add_note, search_notes, list_notes]",
          "tools: [add_note, search_notes, list_notes, slow]",
        )
        .replace(
          "serve:",
          () =>
            `  slow:\n    description: Sleeps\n    run: [sh, -c, 'echo $$ > "$PIDFILE"; sleep 60']\n    env: { PIDFILE: "\${PIDFILE}" }\n    timeout: 2\n\nserve:`,
        ),
    );
    s = await connectServe(dir, { cwd: tmp.path, env: { PIDFILE: path.join(tmp.path, "slow.pid") } });
    reaper.track(s.pid);
  });
  after(async () => {
    await s?.close();
    await reaper.reap();
    tmp.cleanup();
  });

  it("introduces itself with the adapter's name and description", () => {
    const info = s.client.getServerVersion();
    assert.equal(info?.name, "notes");
    assert.equal(info?.description, "Shared notes for a team of agents, kept in the project's .notes.jsonl");
  });

  it("lists exactly exports.tools, in order, with annotations", async () => {
    const { tools } = await s.client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ["add_note", "search_notes", "list_notes", "slow"]);
    assert.equal(tools[0].annotations?.readOnlyHint, false);
    assert.equal(tools[1].annotations?.readOnlyHint, true);
    assert.ok(tools[2].outputSchema, "list_notes declares an output schema");
    assert.deepEqual(s.client.getServerCapabilities(), { tools: { listChanged: true } });
  });

  it("runs a command tool with JSON on stdin, in the workspace", { skip: python.skip }, async () => {
    python.assertReady();
    const r = await s.client.callTool({
      name: "add_note",
      arguments: { text: "hermit e2e note", tags: ["e2e"] },
    });
    assert.equal(r.isError, undefined);
    assert.match(textOf(r), /^noted \(1 notes\)$/);
    assert.ok(
      existsSync(path.join(tmp.path, ".notes.jsonl")),
      "${workspaceFolder} is the host's working directory",
    );
    const found = await s.client.callTool({ name: "search_notes", arguments: { query: "e2e" } });
    assert.match(textOf(found), /hermit e2e note/);
  });

  it("passes a JSON object on stdout through as structured content", { skip: python.skip }, async () => {
    python.assertReady();
    const r = await s.client.callTool({ name: "list_notes", arguments: { limit: 5 } });
    const notes = (r.structuredContent as { notes: { text: string }[] }).notes;
    assert.equal(notes.at(-1)?.text, "hermit e2e note");
  });

  it("refuses arguments that do not fit the input schema, without running the tool", async () => {
    const r = await s.client.callTool({ name: "add_note", arguments: { tags: ["no text"] } });
    assert.equal(r.isError, true);
    assert.equal(textOf(r), "invalid arguments for add_note: text is required");
  });

  it("answers an unknown tool with a JSON-RPC invalid-params error", async () => {
    await assert.rejects(s.client.callTool({ name: "nope", arguments: {} }), (err: unknown) => {
      assert.ok(err instanceof McpError);
      assert.equal(err.code, ErrorCode.InvalidParams);
      assert.match(err.message, /unknown tool 'nope'/);
      return true;
    });
  });

  it("kills the whole process group of a tool that runs past its timeout", async () => {
    const pidFile = path.join(tmp.path, "slow.pid");
    const r = await s.client.callTool({ name: "slow", arguments: {} });
    assert.equal(r.isError, true);
    assert.match(textOf(r), /timed out after 2 s/);
    const pid = Number(readFileSync(pidFile, "utf8"));
    assert.ok(Number.isInteger(pid) && pid > 1, `the tool wrote its pid (${pid})`);
    await waitFor(() => groupMembers(pid).length === 0, {
      timeoutMs: 5000,
      what: "the timed-out tool's group to be gone",
    });
  });

  it("kills the whole process group of a cancelled call", async () => {
    const pidFile = path.join(tmp.path, "slow.pid");
    writeFileSync(pidFile, "");
    const ac = new AbortController();
    const call = s.client.callTool({ name: "slow", arguments: {} }, undefined, { signal: ac.signal });
    const pid = await waitFor(() => Number(readFileSync(pidFile, "utf8")) || undefined, {
      timeoutMs: 5000,
      what: "the tool to start",
    });
    assert.ok(alive(pid));
    ac.abort();
    await assert.rejects(call);
    await waitFor(() => groupMembers(pid).length === 0, {
      timeoutMs: 4000,
      what: "the cancelled tool's group to be gone",
    });
  });
});

describe("serve: upstream servers from npm", () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  let s: HermitSession;

  before(async () => {
    writeFileSync(
      path.join(tmp.path, "hermit.yaml"),
      `name: upstreams
exports:
  tools: [echo, get-sum, trigger-long-running-operation, read_graph, create_entities, memory_search]
mcp_servers:
  memory:
    command: npx
    args: [-y, ${MEMORY}]
    env: { MEMORY_FILE_PATH: "\${workspaceFolder}/graph.jsonl" }
    tools: { include: [read_graph, create_entities, search_nodes], resources: false }
    rename: { search_nodes: memory_search }
  everything:
    command: npx
    args: [-y, ${EVERYTHING}]
    tools: { include: [echo, get-sum, "trigger-long-*"] }
`,
    );
    s = await connectServe(tmp.path, { cwd: tmp.path });
    reaper.track(s.pid);
  });
  after(async () => {
    await s?.close();
    await reaper.reap();
    tmp.cleanup();
  });

  it("lists exactly exports.tools from the upstreams, renamed where asked", async () => {
    const { tools } = await s.client.listTools();
    assert.deepEqual(tools.map((t) => t.name), [
      "echo",
      "get-sum",
      "trigger-long-running-operation",
      "read_graph",
      "create_entities",
      "memory_search",
    ]);
  });

  it("advertises resources and prompts only where a server backs them and the manifest allows", () => {
    const caps = s.client.getServerCapabilities();
    assert.ok(caps?.tools);
    assert.ok(caps?.resources, "everything serves resources");
    assert.ok(caps?.prompts, "everything serves prompts");
  });

  it("calls upstream tools", async () => {
    assert.match(
      textOf(await s.client.callTool({ name: "echo", arguments: { message: "hi there" } })),
      /hi there/,
    );
    assert.match(textOf(await s.client.callTool({ name: "get-sum", arguments: { a: 2, b: 40 } })), /42/);
    await s.client.callTool({
      name: "create_entities",
      arguments: { entities: [{ name: "hermit", entityType: "tool", observations: ["x"] }] },
    });
    assert.match(
      textOf(await s.client.callTool({ name: "memory_search", arguments: { query: "hermit" } })),
      /"hermit"/,
    );
  });

  it("passes progress notifications through", async () => {
    const progress: number[] = [];
    const r = await s.client.callTool(
      { name: "trigger-long-running-operation", arguments: { duration: 1, steps: 3 } },
      undefined,
      { onprogress: (p) => progress.push(p.progress) },
    );
    assert.equal(r.isError, undefined);
    assert.ok(progress.length >= 2, `got progress ${JSON.stringify(progress)}`);
  });

  it("passes resources and prompts through", async () => {
    const { resources } = await s.client.listResources();
    assert.ok(resources.length > 0);
    const read = await s.client.readResource({ uri: resources[0].uri });
    assert.ok(read.contents.length > 0);
    const { prompts } = await s.client.listPrompts();
    assert.ok(prompts.length > 0);
    const simple = prompts.find((p) => !p.arguments?.some((a) => a.required)) ?? prompts[0];
    const got = await s.client.getPrompt({ name: simple.name, arguments: {} });
    assert.ok(got.messages.length > 0);
  });

  it("reconnects after the upstream is killed, and a read-only call succeeds", async () => {
    const before = await waitFor(() => upstreamPid(s.pid, "server-memory"), {
      timeoutMs: 10_000,
      what: "the memory server process",
    });
    kill(before, "SIGKILL");
    const r = await s.client.callTool({ name: "read_graph", arguments: {} });
    assert.equal(r.isError, undefined, textOf(r));
    assert.match(textOf(r), /hermit/, "the graph file survived the restart");
    const afterPid = await waitFor(() => upstreamPid(s.pid, "server-memory"), {
      timeoutMs: 10_000,
      what: "a new memory server",
    });
    assert.notEqual(afterPid, before);
  });
});

describe("serve: idle recycle", () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  let s: HermitSession;

  before(async () => {
    writeFileSync(
      path.join(tmp.path, "hermit.yaml"),
      `name: recycle
exports: { tools: [read_graph] }
mcp_servers:
  memory:
    command: npx
    args: [-y, ${MEMORY}]
    env: { MEMORY_FILE_PATH: "\${workspaceFolder}/graph.jsonl" }
    tools: { include: [read_graph], resources: false }
    idle_timeout_seconds: 2
`,
    );
    s = await connectServe(tmp.path, { cwd: tmp.path });
    reaper.track(s.pid);
  });
  after(async () => {
    await s?.close();
    await reaper.reap();
    tmp.cleanup();
  });

  it("stops an idle stdio server and restarts it transparently on the next call", async () => {
    const first = await waitFor(() => upstreamPid(s.pid, "server-memory"), {
      timeoutMs: 10_000,
      what: "the memory server",
    });
    await waitFor(() => !alive(first), { timeoutMs: 15_000, what: "the idle server to be recycled" });
    const { tools } = await s.client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ["read_graph"], "tools stay listed while the server sleeps");
    const r = await s.client.callTool({ name: "read_graph", arguments: {} });
    assert.equal(r.isError, undefined, textOf(r));
    const second = await waitFor(() => upstreamPid(s.pid, "server-memory"), {
      timeoutMs: 10_000,
      what: "the restarted server",
    });
    assert.notEqual(second, first);
  });
});
