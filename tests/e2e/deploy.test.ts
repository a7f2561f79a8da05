/**
 * deploy and convert from the compiled binary: two deploys into the same files at the same time
 * lose nothing (real processes, the lock serializes them), exit codes (4 refused by screening with
 * nothing written, 2 for usage and for a serve.command whose DIR holds no adapter), `--dry-run` output, `--json`, convert honouring HOME, and a
 * cloned project's own files (a planted record, links in `.hermit/`) never leading a write out of it.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { GOLDEN_ADAPTER, snapshot } from "../helpers/deploy.ts";
import { examples, fixtures, runHermit } from "../helpers/hermit.ts";
import { copyAdapter, tempDir } from "../helpers/tmp.ts";

describe("hermit deploy / convert (binary)", () => {
  const tmp = tempDir("hermit-deploy-e2e-");
  after(tmp.cleanup);
  const home = path.join(tmp.path, "home");
  mkdirSync(home);
  const env = {
    ...process.env,
    HOME: home,
    HERMIT_HOME: path.join(tmp.path, "state"),
    CODEX_HOME: undefined,
  };
  const notes = copyAdapter(examples + "/notes", tmp.path);
  const knowledge = copyAdapter(examples + "/knowledge", tmp.path);

  it("two deploys of different adapters into the same files at once lose nothing", async () => {
    // HERMIT_DEPLOY_PAUSE_MS holds each run between reading and writing: without the lock, the
    // second writer would drop the first one's entries every time.
    const racing = { ...env, HERMIT_DEPLOY_PAUSE_MS: "400" };
    for (let round = 0; round < 2; round++) {
      const project = path.join(tmp.path, `race-${round}`);
      mkdirSync(project);
      const runs = await Promise.all(
        [notes, knowledge].map((a) =>
          runHermit(["deploy", a, project, "--host", "claude,codex,gemini"], {
            env: racing,
            timeoutMs: 60_000,
          })
        ),
      );
      for (const r of runs) assert.equal(r.code, 0, r.stderr);
      const mcp = JSON.parse(readFileSync(path.join(project, ".mcp.json"), "utf8"));
      assert.deepEqual(Object.keys(mcp.mcpServers).sort(), ["knowledge", "notes"]);
      const toml = readFileSync(path.join(project, ".codex", "config.toml"), "utf8");
      assert.match(toml, /^\[mcp_servers\.notes\]$/m);
      assert.match(toml, /^\[mcp_servers\.knowledge\]$/m);
      const agents = readFileSync(path.join(project, "AGENTS.md"), "utf8");
      assert.match(agents, /hermit:notes begin/);
      assert.match(agents, /hermit:knowledge begin/);
      const gemini = JSON.parse(readFileSync(path.join(project, ".gemini", "settings.json"), "utf8"));
      assert.deepEqual(Object.keys(gemini.mcpServers).sort(), ["knowledge", "notes"]);
      // and both removals at once leave the project empty
      const removals = await Promise.all(
        [notes, knowledge].map((a) =>
          runHermit(["deploy", a, project, "--remove"], { env: racing, timeoutMs: 60_000 })
        ),
      );
      for (const r of removals) assert.equal(r.code, 0, r.stderr);
      assert.deepEqual([...snapshot(project, []).keys()], []);
    }
  });

  it("exit 4 when screening refuses the adapter, and nothing is written", async () => {
    const hostile = path.join(tmp.path, "hostile");
    mkdirSync(hostile);
    cpSync(
      path.join(fixtures, "hostile", "ioc-hermes-0day-original.yaml"),
      path.join(hostile, "hermit.yaml"),
    );
    const project = path.join(tmp.path, "refused");
    mkdirSync(project);
    const r = await runHermit(["deploy", hostile, project, "--host", "claude"], { env });
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr, /^error: refused: mcp_servers\.evil: /m);
    assert.deepEqual([...snapshot(project, []).keys()], []);
  });

  it("exit 2 for usage errors: no --host, an unknown host, a missing project", async () => {
    const project = path.join(tmp.path, "usage");
    mkdirSync(project);
    const none = await runHermit(["deploy", notes, project], { env });
    assert.equal(none.code, 2);
    assert.match(none.stderr, /--host is required/);
    const unknown = await runHermit(["deploy", notes, project, "--host", "emacs"], { env });
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown host 'emacs'/);
    const missing = await runHermit(["deploy", notes, path.join(tmp.path, "nope"), "--host", "claude"], {
      env,
    });
    assert.equal(missing.code, 2);
    assert.deepEqual([...snapshot(project, []).keys()], []);
  });

  it("a write that fails part-way: exit 1, one line naming the file, the project as it was", async () => {
    const project = path.join(tmp.path, "blocked");
    mkdirSync(project);
    writeFileSync(path.join(project, ".claude"), "a file where hermit needs a directory\n");
    const r = await runHermit(["deploy", GOLDEN_ADAPTER, project, "--host", "claude"], { env });
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      /^error: cannot write \.claude\/skills\/take-notes\/SKILL\.md \(E[A-Z]+.*\); nothing was changed\n$/,
    );
    assert.deepEqual([...snapshot(project, []).keys()], [".claude"]);
  });

  it("--dry-run prints the plan and a diff; --json reports per host", async () => {
    const project = path.join(tmp.path, "dry");
    mkdirSync(project);
    const dry = await runHermit(["deploy", GOLDEN_ADAPTER, project, "--host", "pi", "--dry-run"], { env });
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, /^dry run: deploying notes into pi/m);
    assert.match(dry.stdout, /not supported: roles \(archivist\): Pi has no subagents/);
    assert.match(dry.stdout, /^\+\+\+ b\/\.pi\/mcp\.json$/m);
    assert.deepEqual([...snapshot(project, []).keys()], []);
    const json = await runHermit(["deploy", GOLDEN_ADAPTER, project, "--host", "pi", "--json"], { env });
    const report = JSON.parse(json.stdout);
    assert.equal(report.hosts[0].host, "pi");
    assert.ok(
      report.hosts[0].items.some((i: { what: string; status: string }) =>
        i.what === "MCP server notes" && i.status === "created"
      ),
    );
    assert.match(report.hosts[0].reconnect, /\/mcp reconnect notes/);
  });

  it("convert writes into the user's files under HOME and removes them again", async () => {
    const r = await runHermit(["convert", GOLDEN_ADAPTER, "--host", "codex,hermes"], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.match(readFileSync(path.join(home, ".codex", "config.toml"), "utf8"), /^\[mcp_servers\.notes\]$/m);
    assert.match(readFileSync(path.join(home, ".hermes", "config.yaml"), "utf8"), /^ {2}notes:$/m);
    assert.match(r.stdout, /reconnect: in Hermes: \/reload-mcp/);
    const back = await runHermit(["convert", GOLDEN_ADAPTER, "--remove"], { env });
    assert.equal(back.code, 0, back.stderr);
    assert.equal(existsSync(path.join(home, ".codex")), false);
    assert.equal(existsSync(path.join(home, ".hermes")), false);
  });

  it("a planted record naming a file outside the project: exit 2, one line, the file untouched", async () => {
    const victim = path.join(tmp.path, "victim-keys");
    writeFileSync(victim, "secret unknown content\n");
    const project = path.join(tmp.path, "planted");
    mkdirSync(path.join(project, ".hermit"), { recursive: true });
    const item = {
      kind: "file",
      file: victim,
      what: "skill x",
      owners: ["notes/claude"],
      hash: "0".repeat(64),
    };
    const record = { version: 1, items: [{ ...item, previous: btoa("ATTACKER\n") }], files: {}, dirs: [] };
    writeFileSync(path.join(project, ".hermit", "deployed.json"), JSON.stringify(record));
    for (const force of [[], ["--force"]]) {
      const r = await runHermit(["deploy", GOLDEN_ADAPTER, project, "--host", "claude", ...force], { env });
      assert.equal(r.code, 2, r.stderr);
      assert.match(
        r.stderr,
        /^error: \S+deployed\.json: items\[0\]\.file names \S+victim-keys, outside the project; [^\n]*\n$/,
      );
      assert.equal(readFileSync(victim, "utf8"), "secret unknown content\n");
      assert.deepEqual([...snapshot(project, []).keys()], [".hermit/deployed.json"]);
    }
  });

  it("a backup in .hermit that is a link: exit 2, one line, its target untouched", async () => {
    const victim = path.join(tmp.path, "victim-backup");
    writeFileSync(victim, "ORIGINAL\n");
    const project = path.join(tmp.path, "linked-backup");
    mkdirSync(path.join(project, ".hermit", "backup"), { recursive: true });
    writeFileSync(path.join(project, "CLAUDE.md"), "ssh-ed25519 AAAA attacker\n");
    symlinkSync(victim, path.join(project, ".hermit", "backup", "CLAUDE.md"));
    const r = await runHermit(["deploy", GOLDEN_ADAPTER, project, "--host", "claude"], { env });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^error: \.hermit\/backup\/CLAUDE\.md is a symlink; [^\n]*\n$/);
    assert.equal(readFileSync(victim, "utf8"), "ORIGINAL\n");
    assert.equal(readFileSync(path.join(project, "CLAUDE.md"), "utf8"), "ssh-ed25519 AAAA attacker\n");
  });

  it("a project host file linked out of the project: exit 2, one line, its target untouched", async () => {
    const bashrc = path.join(tmp.path, "victim-bashrc");
    writeFileSync(bashrc, "export PATH=$PATH:/opt/bin\n");
    const project = path.join(tmp.path, "linked-claude-md");
    mkdirSync(project);
    symlinkSync(bashrc, path.join(project, "CLAUDE.md"));
    const r = await runHermit(["deploy", GOLDEN_ADAPTER, project, "--host", "claude"], { env });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^error: CLAUDE\.md leads to \S+victim-bashrc, outside the project; [^\n]*\n$/);
    assert.equal(readFileSync(bashrc, "utf8"), "export PATH=$PATH:/opt/bin\n");
    assert.equal(existsSync(path.join(project, ".hermit")), false);
  });

  it("a project file that is not UTF-8: exit 2, one line naming it, its bytes as they were", async () => {
    const project = path.join(tmp.path, "latin1");
    mkdirSync(project);
    const latin1 = Buffer.from("# Notes\ncaf\xe9 latin1 line\n", "latin1");
    writeFileSync(path.join(project, "AGENTS.md"), latin1);
    const r = await runHermit(["deploy", GOLDEN_ADAPTER, project, "--host", "codex"], { env });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^error: AGENTS\.md: not UTF-8 text \(line 2\); [^\n]*nothing was written\n$/);
    assert.ok(readFileSync(path.join(project, "AGENTS.md")).equals(latin1));
    assert.deepEqual([...snapshot(project, []).keys()], ["AGENTS.md"]);
  });

  it("two adapter directories with the same name: the second is a conflict, exit 2, naming both", async () => {
    const x = copyAdapter(GOLDEN_ADAPTER, path.join(tmp.path, "same-x"), "tools");
    const y = copyAdapter(GOLDEN_ADAPTER, path.join(tmp.path, "same-y"), "tools");
    const project = path.join(tmp.path, "same-name");
    mkdirSync(project);
    assert.equal((await runHermit(["deploy", x, project, "--host", "claude"], { env })).code, 0);
    const mcp = readFileSync(path.join(project, ".mcp.json"), "utf8");
    for (const args of [["--host", "claude"], ["--remove"]]) {
      const r = await runHermit(["deploy", y, project, ...args], { env });
      assert.equal(r.code, 2, r.stderr);
      assert.match(
        r.stderr,
        /^error: the adapter 'notes' here was deployed from \S+same-x\/tools; \S+same-y\/tools has the same name: [^\n]*\n$/,
      );
      assert.equal(readFileSync(path.join(project, ".mcp.json"), "utf8"), mcp);
    }
  });

  it("a serve.command whose DIR holds no adapter: deploy and convert refuse, exit 2, nothing written", async () => {
    const broken = copyAdapter(GOLDEN_ADAPTER, path.join(tmp.path, "broken-serve"), "tools");
    const manifest = path.join(broken, "hermit.yaml");
    writeFileSync(
      manifest,
      readFileSync(manifest, "utf8").replace("command: hermit serve .", "command: hermit serve ./nowhere"),
    );
    const project = path.join(tmp.path, "broken-serve-project");
    mkdirSync(project);
    const homeBefore = snapshot(home, []);
    for (
      const args of [["deploy", broken, project, "--host", "claude,codex"], [
        "convert",
        broken,
        "--host",
        "codex",
      ]]
    ) {
      const r = await runHermit(args, { env });
      assert.equal(r.code, 2, r.stderr);
      assert.equal(
        r.stderr,
        `error: ${manifest}: serve.command 'hermit serve ./nowhere' serves ${
          path.join(broken, "nowhere")
        }, where there is no hermit.yaml, so a host started with it fails; its DIR is relative to the adapter: command: hermit serve .; nothing was written\n`,
      );
    }
    assert.deepEqual([...snapshot(project, []).keys()], []);
    assert.deepEqual(snapshot(home, []), homeBefore);
  });
});
