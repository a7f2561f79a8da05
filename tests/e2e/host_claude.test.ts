/**
 * A real host connects: Claude Code, with an isolated HOME and a project `.mcp.json` pointing at
 * `dist/hermit serve examples/…`, reports the servers Connected (`claude mcp list` starts each
 * server and completes the MCP handshake).
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { examples, hermitBin, runCommand, runHermit } from "../helpers/hermit.ts";
import { claudeHome, hostCli, parseClaudeList } from "../helpers/hosts.ts";
import { Reaper } from "../helpers/procs.ts";
import { readEndpointFile, servicePids, writeStandaloneAdapter } from "../helpers/service.ts";

const claude = hostCli("claude");

describe("Claude Code connects to hermit serve", {
  skip: claude ? false : "Claude Code CLI not installed (npm --prefix .ci/hosts ci)",
}, () => {
  const { home, cleanup } = claudeHome();
  after(cleanup);

  it("reports a command-tool adapter and an npm-upstream adapter Connected", async () => {
    const project = path.join(home, "project");
    mkdirSync(project);
    writeFileSync(
      path.join(project, ".mcp.json"),
      JSON.stringify({
        mcpServers: {
          notes: { type: "stdio", command: hermitBin(), args: ["serve", path.join(examples, "notes")] },
          knowledge: {
            type: "stdio",
            command: hermitBin(),
            args: ["serve", path.join(examples, "knowledge")],
          },
          broken: {
            type: "stdio",
            command: hermitBin(),
            args: ["serve", path.join(home, "no-such-adapter")],
          },
        },
      }),
    );
    const r = await runCommand(claude!, ["mcp", "list"], {
      cwd: project,
      env: { ...process.env, HOME: home, CLAUDE_CONFIG_DIR: undefined },
      timeoutMs: 120_000,
    });
    const status = parseClaudeList(r.stdout);
    assert.match(status.get("notes") ?? "", /Connected/, r.stdout + r.stderr);
    assert.match(status.get("knowledge") ?? "", /Connected/, r.stdout + r.stderr);
    // the negative control: the same parser sees a failure when there is one
    assert.match(status.get("broken") ?? "", /Failed/, r.stdout);
  });
});

describe("Claude Code connects to a standalone service", {
  skip: claude ? false : "Claude Code CLI not installed (npm --prefix .ci/hosts ci)",
}, () => {
  const { home, cleanup } = claudeHome();
  const reaper = new Reaper();
  const adapter = path.join(home, "shared");
  after(async () => {
    for (const p of servicePids(adapter)) reaper.track(p);
    await reaper.reap();
    cleanup();
  });

  it("reports both a relay entry and a type: http entry Connected", async () => {
    mkdirSync(adapter);
    writeStandaloneAdapter(adapter, { hostLaunch: false });
    const d = await runHermit(["serve", adapter, "--standalone", "--daemon"], { timeoutMs: 60_000 });
    assert.equal(d.code, 0, d.stderr);
    const ep = readEndpointFile(adapter)!;
    reaper.track(ep.pid);
    const project = path.join(home, "project2");
    mkdirSync(project);
    writeFileSync(
      path.join(project, ".mcp.json"),
      JSON.stringify({
        mcpServers: {
          relayed: { type: "stdio", command: hermitBin(), args: ["serve", adapter] },
          direct: { type: "http", url: ep.url, headers: { Authorization: "Bearer ${HERMIT_SERVE_TOKEN}" } },
          wrongtoken: { type: "http", url: ep.url, headers: { Authorization: "Bearer not-the-token" } },
        },
      }),
    );
    const r = await runCommand(claude!, ["mcp", "list"], {
      cwd: project,
      env: { ...process.env, HOME: home, CLAUDE_CONFIG_DIR: undefined, HERMIT_SERVE_TOKEN: ep.token },
      timeoutMs: 120_000,
    });
    const status = parseClaudeList(r.stdout);
    assert.match(status.get("relayed") ?? "", /Connected/, r.stdout + r.stderr);
    assert.match(status.get("direct") ?? "", /Connected/, r.stdout + r.stderr);
    assert.doesNotMatch(status.get("wrongtoken") ?? "missing", /Connected/, r.stdout);
    assert.deepEqual(servicePids(adapter), [ep.pid], "the relay attached to the running service");
  });
});
