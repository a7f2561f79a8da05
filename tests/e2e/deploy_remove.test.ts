/**
 * `--remove` once the adapter directory is gone (deleted, renamed), from the compiled binary: the
 * adapter is named by the name it was deployed under or by the directory it was deployed from,
 * and what hermit wrote goes byte for byte; an argument that names nothing on record, or more
 * than one adapter, writes nothing and says what is on record; a planted record still leads
 * nowhere outside the project.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { GOLDEN_ADAPTER, snapshot } from "../helpers/deploy.ts";
import { runHermit } from "../helpers/hermit.ts";
import { copyAdapter, tempDir } from "../helpers/tmp.ts";

describe("hermit deploy / convert --remove without the adapter directory (binary)", () => {
  const tmp = tempDir("hermit-remove-e2e-");
  after(tmp.cleanup);
  const home = path.join(tmp.path, "home");
  mkdirSync(home);
  const state = path.join(tmp.path, "state");
  const env = { ...process.env, HOME: home, HERMIT_HOME: state, CODEX_HOME: undefined };
  /** A directory to run hermit in where no adapter directory of the names used here exists. */
  const elsewhere = path.join(tmp.path, "elsewhere");
  mkdirSync(elsewhere);
  const hermit = (args: string[], cwd = elsewhere) => runHermit(args, { env, cwd, timeoutMs: 60_000 });

  /** A project holding the user's own entries, context and settings next to where hermit writes. */
  function userProject(name: string): string {
    const project = path.join(tmp.path, name);
    mkdirSync(path.join(project, ".gemini"), { recursive: true });
    writeFileSync(
      path.join(project, ".mcp.json"),
      '{\n  "mcpServers": {\n    "mine": { "command": "x" }\n  }\n}\n',
    );
    writeFileSync(path.join(project, "CLAUDE.md"), "# Mine\n\nMy own notes.\n");
    writeFileSync(path.join(project, "AGENTS.md"), "# Agents\r\nmine\r\n");
    writeFileSync(path.join(project, ".gemini", "settings.json"), '{"theme":"dark"}');
    return project;
  }

  /** A copy of the golden adapter (name: notes, or `name`) at `dir`. */
  function adapterAt(dir: string, name = "notes"): string {
    mkdirSync(path.dirname(dir), { recursive: true });
    copyAdapter(GOLDEN_ADAPTER, path.dirname(dir), path.basename(dir));
    const file = path.join(dir, "hermit.yaml");
    writeFileSync(file, readFileSync(file, "utf8").replace(/^name: notes$/m, `name: ${name}`));
    return dir;
  }

  it("a deleted adapter is removed by the name it was deployed under, byte for byte", async () => {
    const project = userProject("by-name");
    const before = snapshot(project, []);
    const adapter = adapterAt(path.join(tmp.path, "by-name-src", "notes"));
    const d = await hermit(["deploy", adapter, project, "--host", "claude,codex,gemini"]);
    assert.equal(d.code, 0, d.stderr);
    rmSync(adapter, { recursive: true });
    const deployed = snapshot(project, []);

    const dry = await hermit(["deploy", "notes", project, "--remove", "--dry-run"]);
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, /^dry run: removing notes from claude, codex, gemini /m);
    assert.deepEqual(snapshot(project, []), deployed);

    const r = await hermit(["deploy", "notes", project, "--remove"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^removing notes from claude, codex, gemini /m);
    assert.deepEqual(snapshot(project, []), before);
  });

  it("and by the directory it was deployed from, as typed then (deploy and convert)", async () => {
    const project = userProject("by-dir");
    const before = snapshot(project, []);
    const work = path.join(tmp.path, "by-dir-work");
    const adapter = adapterAt(path.join(work, "my-tools"), "tools");
    assert.equal((await hermit(["deploy", "./my-tools", project, "--host", "claude,codex"], work)).code, 0);
    assert.equal((await hermit(["convert", "my-tools/", "--host", "codex,hermes"], work)).code, 0);
    assert.ok(existsSync(path.join(home, ".hermes", "config.yaml")));
    rmSync(adapter, { recursive: true });

    const r = await hermit(["deploy", "./my-tools", project, "--remove"], work);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^removing tools from claude, codex /m);
    assert.deepEqual(snapshot(project, []), before);
    const c = await hermit(["convert", adapter, "--remove"]);
    assert.equal(c.code, 0, c.stderr);
    assert.match(c.stdout, /^removing tools from codex, hermes /m);
    assert.deepEqual(readdirSync(home), []);
  });

  it("nothing on record by that name or from there: exit 2, one line with the record and its names", async () => {
    const project = userProject("no-match");
    const adapter = adapterAt(path.join(tmp.path, "no-match-src", "notes"));
    assert.equal((await hermit(["deploy", adapter, project, "--host", "claude"])).code, 0);
    rmSync(adapter, { recursive: true });
    const deployed = snapshot(project, []);
    const record = path.join(project, ".hermit", "deployed.json");
    const r = await hermit(["deploy", "nots", project, "--remove"]);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(
      r.stderr,
      `error: nots: no such adapter directory, and nothing on hermit's record ${record} was deployed under that name or from there; on record: 'notes' (deployed from ${adapter}); give one of those names\n`,
    );
    assert.deepEqual(snapshot(project, []), deployed);

    const empty = path.join(tmp.path, "no-record");
    mkdirSync(empty);
    const none = await hermit(["deploy", "notes", empty, "--remove"]);
    assert.equal(none.code, 2, none.stderr);
    assert.match(
      none.stderr,
      /^error: notes: no such adapter directory, and nothing is on hermit's record here \(\S+no-record\/\.hermit\/deployed\.json does not exist\)\n$/,
    );
    assert.deepEqual(readdirSync(empty), []);
  });

  it("two recorded adapters it could mean: exit 2 naming both, nothing written; each named as offered", async () => {
    const project = userProject("ambiguous");
    const before = snapshot(project, []);
    const work = path.join(tmp.path, "ambiguous-work");
    const notes = adapterAt(path.join(tmp.path, "ambiguous-src", "x"));
    const tools = adapterAt(path.join(work, "notes"), "tools");
    assert.equal((await hermit(["deploy", notes, project, "--host", "claude"])).code, 0);
    assert.equal((await hermit(["deploy", "notes", project, "--host", "gemini"], work)).code, 0);
    rmSync(notes, { recursive: true });
    rmSync(tools, { recursive: true });
    const deployed = snapshot(project, []);

    const r = await hermit(["deploy", "notes", project, "--remove"], work);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(
      r.stderr,
      `error: notes could be either adapter on hermit's record ${
        path.join(project, ".hermit", "deployed.json")
      }: 'notes' (deployed from ${notes}) or 'tools' (deployed from ${tools}); name the one to remove as ${notes} or tools; nothing was written\n`,
    );
    assert.deepEqual(snapshot(project, []), deployed);

    const a = await hermit(["deploy", "tools", project, "--remove"], work);
    assert.equal(a.code, 0, a.stderr);
    assert.match(a.stdout, /^removing tools from gemini /m);
    const b = await hermit(["deploy", notes, project, "--remove"], work);
    assert.equal(b.code, 0, b.stderr);
    assert.match(b.stdout, /^removing notes from claude /m);
    assert.deepEqual(snapshot(project, []), before);
  });

  it("a host on record that hermit does not know: exit 2 naming the record and the entry, nothing written", async () => {
    const project = userProject("unknown-host");
    const adapter = adapterAt(path.join(tmp.path, "unknown-host-src", "notes"));
    assert.equal((await hermit(["deploy", adapter, project, "--host", "claude,gemini"])).code, 0);
    const recordFile = path.join(project, ".hermit", "deployed.json");
    const record = JSON.parse(readFileSync(recordFile, "utf8"));
    record.items[1].owners.push("notes/evil"); // a hand-edited or planted record
    writeFileSync(recordFile, JSON.stringify(record));
    const planted = snapshot(project, []);
    const refusal =
      `error: ${recordFile}: items[1].owners has 'notes/evil', no host hermit knows (hosts: claude, codex, hermes, pi, opencode, cursor, gemini, vscode); take it out of that item's owners, or remove notes from the hosts hermit knows with --host claude,gemini; nothing was written\n`;
    for (const args of [["--remove", "--dry-run"], ["--remove"], ["--remove", "--host", "all"]]) {
      for (const named of [adapter, "notes"]) {
        const r = await hermit(["deploy", named, project, ...args]);
        assert.equal(r.code, 2, `${args}: ${r.stderr}`);
        assert.equal(r.stderr, refusal);
        assert.equal(r.stdout, "");
        assert.deepEqual(snapshot(project, []), planted);
      }
    }
    // a deploy leaves the unknown owner be; --host removes the known hosts' share
    const d = await hermit(["deploy", adapter, project, "--host", "claude"]);
    assert.equal(d.code, 0, d.stderr);
    assert.match(d.stdout, /^nothing changed$/m);
    const r = await hermit(["deploy", adapter, project, "--remove", "--host", "claude,gemini"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^removing notes from claude, gemini /m);
    assert.deepEqual(
      JSON.parse(readFileSync(recordFile, "utf8")).items.map((i: { owners: string[] }) => i.owners),
      [
        ["notes/evil"],
      ],
    );
  });

  it("a record whose container is [] (the whole document): exit 1 naming the record, the item and the fix; nothing written", async () => {
    const project = path.join(tmp.path, "root-container");
    mkdirSync(project);
    const adapter = adapterAt(path.join(tmp.path, "root-container-src", "notes"));
    assert.equal((await hermit(["deploy", adapter, project, "--host", "claude"])).code, 0);
    const recordFile = path.join(project, ".hermit", "deployed.json");
    const record = JSON.parse(readFileSync(recordFile, "utf8"));
    record.files[".mcp.json"].containers = [[]]; // hand-edited or planted
    writeFileSync(recordFile, JSON.stringify(record));
    const planted = snapshot(project, []);
    // before: exit 0, "removed MCP server notes from .mcp.json" and "nothing hermit wrote is left
    // here", while the .mcp.json hermit had created stayed as {"mcpServers": {}}
    const r = await hermit(["deploy", adapter, project, "--remove"]);
    assert.equal(r.code, 2, r.stderr); // bad input
    assert.equal(
      r.stderr,
      `error: ${recordFile} is not a hermit deploy record (files[".mcp.json"].containers[0] is [], the whole document; hermit records only keys inside it); repair it, or delete it (hermit then no longer knows what it wrote: its entries count as the user's own)\n`,
    );
    assert.equal(r.stdout, "");
    assert.deepEqual(snapshot(project, []), planted);
    record.files[".mcp.json"].containers = [["mcpServers"]]; // repaired as the line says
    writeFileSync(recordFile, JSON.stringify(record));
    const fixed = await hermit(["deploy", adapter, project, "--remove"]);
    assert.equal(fixed.code, 0, fixed.stderr);
    assert.match(fixed.stdout, /^ {2}removed MCP server notes and \.mcp\.json \(hermit had created it\)$/m);
    assert.deepEqual(readdirSync(project), []);
  });

  it("a planted record still leads nowhere outside the project, and its names must be adapter names", async () => {
    const victim = path.join(tmp.path, "victim");
    writeFileSync(victim, "secret\n");
    const project = path.join(tmp.path, "planted");
    mkdirSync(path.join(project, ".hermit"), { recursive: true });
    const item = {
      kind: "file",
      file: victim,
      what: "skill x",
      owners: ["notes/claude"],
      hash: "0".repeat(64),
    };
    const outside = { version: 1, items: [{ ...item, previous: btoa("ATTACKER\n") }], files: {}, dirs: [] };
    const recordFile = path.join(project, ".hermit", "deployed.json");
    writeFileSync(recordFile, JSON.stringify({ ...outside, adapters: { notes: "/gone/notes" } }));
    const r = await hermit(["deploy", "notes", project, "--remove", "--force"]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /^error: \S+deployed\.json: items\[0\]\.file names \S+victim, outside the project; [^\n]*\n$/,
    );
    assert.equal(readFileSync(victim, "utf8"), "secret\n");

    // a recorded name that is no adapter's (`..`, `..\\x` on Windows) is never taken: names build
    // paths (the last removal's backups go to removed/<time>-<name>/ in hermit's state directory)
    const inside = { ...item, file: "CLAUDE.md", owners: ["../claude"], previous: btoa("X\n") };
    writeFileSync(path.join(project, "CLAUDE.md"), "mine\n");
    writeFileSync(recordFile, JSON.stringify({ version: 1, items: [inside], files: {}, dirs: [] }));
    const odd = await hermit(["deploy", "..", project, "--remove", "--force"]);
    assert.equal(odd.code, 2, odd.stderr);
    assert.match(
      odd.stderr,
      /^error: \.\.: not a readable adapter \(\S+hermit\.yaml: not found; [^\n]*\), and nothing is on hermit's record here \(\S+deployed\.json names no adapter\)\n$/,
    );
    assert.equal(readFileSync(path.join(project, "CLAUDE.md"), "utf8"), "mine\n");
  });
});
