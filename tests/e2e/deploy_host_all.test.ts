/**
 * `--host all` from the binary: `deploy` takes the hosts with files in the project (never one set
 * up only for the user: Hermes then got a project AGENTS.md and no MCP server), says which file
 * showed each, and with none refuses naming the hosts set up for the user; `convert` takes the
 * hosts set up for the user.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { snapshot } from "../helpers/deploy.ts";
import { examples, runHermit } from "../helpers/hermit.ts";
import { copyAdapter, tempDir } from "../helpers/tmp.ts";

describe("--host all", () => {
  const tmp = tempDir("hermit-host-all-");
  after(tmp.cleanup);
  const home = path.join(tmp.path, "home");
  mkdirSync(path.join(home, ".hermes"), { recursive: true });
  mkdirSync(path.join(home, ".claude"));
  const env = {
    ...process.env,
    HOME: home,
    HERMIT_HOME: path.join(tmp.path, "state"),
    CODEX_HOME: undefined,
    HERMES_HOME: undefined,
    CLAUDE_CONFIG_DIR: undefined,
    XDG_CONFIG_HOME: undefined,
    PI_CODING_AGENT_DIR: undefined,
  };
  const notes = copyAdapter(examples + "/notes", tmp.path);

  it("in a project without any host's files: exit 2, nothing written, the user's hosts named", async () => {
    const project = path.join(tmp.path, "bare");
    mkdirSync(project);
    const r = await runHermit(["deploy", notes, project, "--host", "all"], { env });
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stderr, /^error: --host all: no host has files in .*bare yet/m);
    assert.match(r.stderr, /--host claude,hermes \(set up for your user; hermit convert writes/);
    assert.deepEqual([...snapshot(project, []).keys()], []);
  });

  it("in a project: the hosts with files there, each with what showed it, not the user's", async () => {
    const project = path.join(tmp.path, "used");
    mkdirSync(path.join(project, ".cursor"), { recursive: true });
    writeFileSync(path.join(project, "HERMES.md"), "# house rules\n");
    const r = await runHermit(["deploy", notes, project, "--host", "all"], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^deploying notes into hermes, cursor /m);
    assert.match(
      r.stdout,
      /^--host all: the hosts with files here: hermes \(HERMES\.md\), cursor \(\.cursor\)$/m,
    );
    assert.match(
      r.stdout,
      /not supported: MCP server: Hermes reads MCP servers only from .*config\.yaml; run hermit convert/,
    );
    assert.equal(
      existsSync(path.join(project, ".mcp.json")),
      false,
      "Claude Code is set up for the user only",
    );
    assert.equal(existsSync(path.join(project, ".cursor", "mcp.json")), true);
    // no MCP server went into the project, so /reload-mcp would pick up nothing
    assert.match(
      r.stdout,
      /^ {2}reconnect: in Hermes: start a new session \(AGENTS\.md is read when one starts\)$/m,
    );
    const json = await runHermit(["deploy", notes, project, "--host", "all", "--json"], { env });
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(JSON.parse(json.stdout).detected.map((d: { host: string }) => d.host), [
      "hermes",
      "cursor",
    ]);
    const removed = await runHermit(["deploy", notes, project, "--remove"], { env });
    assert.equal(removed.code, 0, removed.stderr);
    assert.deepEqual([...snapshot(project, []).keys()], ["HERMES.md"]);
  });

  it("convert: the hosts set up for the user", async () => {
    const r = await runHermit(["convert", notes, "--host", "all", "--dry-run"], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^dry run: converting notes into claude, hermes /m);
    assert.match(
      r.stdout,
      /^--host all: the hosts set up for this user: claude \(~\/\.claude\), hermes \(~\/\.hermes\)$/m,
    );
  });
});
