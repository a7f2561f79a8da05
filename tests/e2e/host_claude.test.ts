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
import { examples, hermitBin } from "../helpers/hermit.ts";
import { claudeHome, hostCli, parseClaudeList, runHostCli } from "../helpers/hosts.ts";
import { Reaper } from "../helpers/procs.ts";
import { servicePids, startDaemon, writeStandaloneAdapter } from "../helpers/service.ts";

const claude = hostCli("claude");

describe("Claude Code connects to hermit serve", {
  skip: claude ? false : "Claude Code CLI not installed (npm --prefix .ci/hosts ci)",
}, () => {
  const { home, cleanup } = claudeHome();
  const reaper = new Reaper();
  after(async () => {
    await reaper.reap();
    cleanup();
  });

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
    const r = await runHostCli(claude!, ["mcp", "list"], {
      cwd: project,
      env: { ...process.env, HOME: home, CLAUDE_CONFIG_DIR: undefined },
      reaper,
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
    const ep = await startDaemon(adapter, { reaper });
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
    const r = await runHostCli(claude!, ["mcp", "list"], {
      cwd: project,
      env: { ...process.env, HOME: home, CLAUDE_CONFIG_DIR: undefined, HERMIT_SERVE_TOKEN: ep.token },
      reaper,
    });
    const status = parseClaudeList(r.stdout);
    assert.match(status.get("relayed") ?? "", /Connected/, r.stdout + r.stderr);
    assert.match(status.get("direct") ?? "", /Connected/, r.stdout + r.stderr);
    assert.doesNotMatch(status.get("wrongtoken") ?? "missing", /Connected/, r.stdout);
    assert.deepEqual(servicePids(adapter), [ep.pid], "the relay attached to the running service");
  });
});
