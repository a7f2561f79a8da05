/**
 * Real hosts read what `hermit deploy` and `convert` wrote (isolated HOME, no login): Claude Code's
 * `claude mcp list` reports the deployed server Connected; Codex's app-server
 * (`mcpServerStatus/list`) starts it and returns the adapter's exported tools — from the project's
 * `.codex/config.toml` once the project is trusted (the user's call, so the test writes the
 * trust entry, not hermit), and from `$CODEX_HOME/config.toml` after convert. Both again through
 * `--serve-url` to a running standalone service, the token only in HERMIT_SERVE_TOKEN.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { codexServerStatus } from "../helpers/codex.ts";
import { examples, runHermit } from "../helpers/hermit.ts";
import { claudeHome, hostCli, parseClaudeList, runHostCli } from "../helpers/hosts.ts";
import { Reaper } from "../helpers/procs.ts";
import { type Daemon, startDaemon, writeStandaloneAdapter } from "../helpers/service.ts";
import { copyAdapter, tempDir } from "../helpers/tmp.ts";

const claude = hostCli("claude");
const codex = hostCli("codex");
const NOTES_TOOLS = ["add_note", "list_notes", "search_notes"];
const SHARED_TOOLS = ["create_entities", "read_graph", "search_nodes"];

describe("real hosts read what deploy and convert wrote", {
  skip: claude && codex ? false : "host CLIs not installed (npm --prefix .ci/hosts ci)",
}, () => {
  const tmp = tempDir("hermit-host-deploy-");
  const { home, cleanup: cleanHome } = claudeHome();
  const codexHome = path.join(home, ".codex");
  const env = {
    ...process.env,
    HOME: home,
    CODEX_HOME: codexHome,
    HERMIT_HOME: path.join(home, ".hermit-state"),
    CLAUDE_CONFIG_DIR: undefined,
    HERMIT_SERVE_TOKEN: undefined,
  };
  const notes = copyAdapter(path.join(examples, "notes"), tmp.path);
  const shared = path.join(tmp.path, "shared");
  const reaper = new Reaper();
  let daemon: Daemon | undefined;
  let url = "";
  let token = "";
  const claudeList = (cwd: string, extra: Record<string, string> = {}) =>
    runHostCli(claude!, ["mcp", "list"], { cwd, env: { ...env, ...extra }, reaper });

  before(async () => {
    mkdirSync(codexHome, { recursive: true });
    mkdirSync(shared);
    writeStandaloneAdapter(shared);
    daemon = await startDaemon(shared, { env, reaper });
    url = daemon.url;
    token = daemon.token;
  });

  after(async () => {
    await daemon?.stop();
    await reaper.reap();
    cleanHome();
    tmp.cleanup();
  });

  it("Claude Code: deploy --host claude → claude mcp list reports it Connected", async () => {
    const project = path.join(tmp.path, "claude-project");
    mkdirSync(project);
    const d = await runHermit(["deploy", notes, project, "--host", "claude"], { env });
    assert.equal(d.code, 0, d.stderr);
    const r = await claudeList(project);
    assert.match(parseClaudeList(r.stdout).get("notes") ?? "", /Connected/, r.stdout + r.stderr);
  });

  it("Claude Code: deploy --serve-url → Connected over HTTP with the token from HERMIT_SERVE_TOKEN", async () => {
    const project = path.join(tmp.path, "claude-remote");
    mkdirSync(project);
    const d = await runHermit(["deploy", shared, project, "--host", "claude", "--serve-url", url], { env });
    assert.equal(d.code, 0, d.stderr);
    const written = readFileSync(path.join(project, ".mcp.json"), "utf8");
    assert.ok(!written.includes(token), "no token in the file");
    assert.match(written, /"Authorization": "Bearer \$\{HERMIT_SERVE_TOKEN\}"/);
    const withToken = await claudeList(project, { HERMIT_SERVE_TOKEN: token });
    assert.match(
      parseClaudeList(withToken.stdout).get("shared") ?? "",
      /Connected/,
      withToken.stdout + withToken.stderr,
    );
    // the negative control: without the token the service turns Claude Code away
    const without = await claudeList(project);
    assert.doesNotMatch(parseClaudeList(without.stdout).get("shared") ?? "", /Connected/, without.stdout);
  });

  it("Codex: deploy --host codex → app-server lists the exported tools once the project is trusted", async () => {
    const project = path.join(tmp.path, "codex-project");
    mkdirSync(project);
    const d = await runHermit(["deploy", notes, project, "--host", "codex"], { env });
    assert.equal(d.code, 0, d.stderr);
    assert.match(d.stdout, /Codex reads \.codex\/config\.toml only in trusted projects/);
    // untrusted: Codex does not read the project's config (the control)
    const untrusted = await codexServerStatus(codex!, { cwd: project, env, reaper });
    assert.equal(untrusted.find((s) => s.name === "notes"), undefined);
    writeFileSync(
      path.join(codexHome, "config.toml"),
      `[projects.${JSON.stringify(project)}]\ntrust_level = "trusted"\n`,
    );
    const again = await runHermit(["deploy", notes, project, "--host", "codex"], { env });
    assert.doesNotMatch(again.stdout, /trusted projects/, "no trust hint once trusted");
    const status = await codexServerStatus(codex!, { cwd: project, env, reaper });
    const server = status.find((s) => s.name === "notes");
    assert.ok(server, JSON.stringify(status));
    assert.equal(server.toolsError ?? null, null);
    assert.deepEqual(Object.keys(server.tools ?? {}).sort(), NOTES_TOOLS);
  });

  it("Codex: convert --serve-url → the user config reaches the service with bearer_token_env_var", async () => {
    const c = await runHermit(["convert", shared, "--host", "codex", "--serve-url", url], { env });
    assert.equal(c.code, 0, c.stderr);
    const toml = readFileSync(path.join(codexHome, "config.toml"), "utf8");
    assert.match(toml, /^bearer_token_env_var = "HERMIT_SERVE_TOKEN"$/m);
    assert.ok(!toml.includes(token));
    const cwd = path.join(tmp.path, "anywhere");
    mkdirSync(cwd);
    const status = await codexServerStatus(codex!, {
      cwd,
      env: { ...env, HERMIT_SERVE_TOKEN: token },
      reaper,
    });
    const server = status.find((s) => s.name === "shared");
    assert.ok(server, JSON.stringify(status));
    assert.equal(server.toolsError ?? null, null);
    assert.deepEqual(Object.keys(server.tools ?? {}).sort(), SHARED_TOOLS);
    const removed = await runHermit(["convert", shared, "--remove"], { env });
    assert.equal(removed.code, 0, removed.stderr);
    assert.doesNotMatch(readFileSync(path.join(codexHome, "config.toml"), "utf8"), /mcp_servers/);
  });
});
