/**
 * deploy/convert rules beyond the golden files: `--force` for an entry hermit did not write (and
 * `--remove` putting it back), a user's edit since hermit wrote an entry, items shared by several
 * hosts, parts the adapter no longer has, `--dry-run`, screening refusal (exit 4, nothing written),
 * `--host all`, Claude Code's AGENTS.md import, symlinked config files, broken files.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { HermitError } from "../../../src/errors.ts";
import { copyTree, deploy, GOLDEN_ADAPTER, goldenCopy, sandbox, snapshot } from "../../helpers/deploy.ts";
import { fixtures } from "../../helpers/hermit.ts";

const mine = `{\n  "mcpServers": {\n    "notes": { "command": "my-own-notes" } // mine\n  }\n}\n`;

async function rejects(p: Promise<unknown>, code: number, re: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof HermitError, String(err));
    assert.equal(err.exitCode, code, err.message);
    assert.match(err.message, re);
    return true;
  });
}

describe("ownership", () => {
  const s = sandbox();
  after(s.cleanup);

  it("refuses to replace a same-named entry hermit did not write; --force does, --remove puts it back", async () => {
    writeFileSync(path.join(s.project, ".mcp.json"), mine);
    await rejects(
      deploy(s, { hosts: ["claude"] }),
      2,
      /\.mcp\.json: MCP server notes: already there and not written by hermit; --force/,
    );
    assert.deepEqual([...snapshot(s.project, []).keys()], [".mcp.json"], "nothing written");
    assert.equal(readFileSync(path.join(s.project, ".mcp.json"), "utf8"), mine);
    const forced = await deploy(s, { hosts: ["claude"], force: true });
    assert.equal(forced.hosts[0].items.find((i) => i.what === "MCP server notes")?.status, "replaced");
    assert.match(readFileSync(path.join(s.project, ".mcp.json"), "utf8"), /"\/opt\/hermit\/bin\/hermit"/);
    await deploy(s, { hosts: ["claude"], remove: true });
    assert.deepEqual([...snapshot(s.project, []).keys()], [".mcp.json"]);
    assert.equal(readFileSync(path.join(s.project, ".mcp.json"), "utf8"), mine);
  });

  it("an entry the user changed after deploy is not overwritten or removed without --force", async () => {
    rmSync(path.join(s.project, ".mcp.json"));
    await deploy(s, { hosts: ["claude"] });
    const file = path.join(s.project, ".mcp.json");
    writeFileSync(file, readFileSync(file, "utf8").replace(`"args": [`, `"args": ["--verbose", `));
    const edited = readFileSync(file, "utf8");
    await rejects(deploy(s, { hosts: ["claude"] }), 2, /changed since hermit wrote it; --force overwrites/);
    assert.equal(readFileSync(file, "utf8"), edited);
    const removed = await deploy(s, { hosts: ["claude"], remove: true });
    assert.match(removed.warnings.join("\n"), /left in place/);
    assert.equal(readFileSync(file, "utf8"), edited);
    await deploy(s, { hosts: ["claude"], remove: true, force: true });
    assert.equal(existsSync(file), false, "hermit created .mcp.json, so it goes with hermit's last entry");
    assert.deepEqual([...snapshot(s.project, []).keys()], []);
  });
});

describe("a lost record (a fresh clone of a project whose host files are committed)", () => {
  const s = sandbox();
  after(s.cleanup);

  it("what is exactly what hermit writes is taken as hermit's again, so --remove takes it away", async () => {
    await deploy(s, { hosts: ["claude"] });
    const deployed = snapshot(s.project, [".hermit"]);
    rmSync(path.join(s.project, ".hermit"), { recursive: true });
    const again = await deploy(s, { hosts: ["claude"] });
    assert.ok(
      again.hosts[0].items.every((i) => i.status === "unchanged"),
      JSON.stringify(again.hosts[0].items),
    );
    assert.deepEqual(snapshot(s.project, [".hermit"]), deployed, "nothing rewritten");
    const removed = await deploy(s, { hosts: ["claude"], remove: true });
    assert.ok(removed.hosts[0].items.every((i) => i.status === "removed"));
    // the files stay (whether hermit created them went with the record), without hermit's parts
    assert.doesNotMatch(readFileSync(path.join(s.project, ".mcp.json"), "utf8"), /notes|hermit/);
    assert.doesNotMatch(readFileSync(path.join(s.project, "CLAUDE.md"), "utf8"), /hermit:notes/);
    assert.deepEqual([...snapshot(s.project, [".hermit"]).keys()], [".mcp.json", "CLAUDE.md"]);
  });
});

describe("shared and stale items", () => {
  const s = sandbox();
  after(s.cleanup);

  it("AGENTS.md and .agents/skills stay while another host still uses them", async () => {
    await deploy(s, { hosts: ["codex", "opencode"] });
    await deploy(s, { hosts: ["codex"], remove: true });
    assert.equal(existsSync(path.join(s.project, ".codex", "config.toml")), false);
    assert.match(readFileSync(path.join(s.project, "AGENTS.md"), "utf8"), /hermit:notes begin/);
    assert.ok(existsSync(path.join(s.project, ".agents", "skills", "take-notes", "SKILL.md")));
    await deploy(s, { hosts: ["opencode"], remove: true });
    assert.deepEqual([...snapshot(s.project, []).keys()], []);
  });

  it("two adapters cannot both own a skill of the same name", async () => {
    const other = path.join(s.root, "other");
    cpSync(GOLDEN_ADAPTER, other, { recursive: true });
    const manifest = path.join(other, "hermit.yaml");
    writeFileSync(manifest, readFileSync(manifest, "utf8").replace("name: notes", "name: other"));
    writeFileSync(
      path.join(other, "skills", "take-notes", "SKILL.md"),
      "---\nname: take-notes\ndescription: x\n---\nOther.\n",
    );
    await deploy(s, { hosts: ["claude"] });
    await rejects(
      deploy(s, { adapter: other, hosts: ["claude"] }),
      2,
      /SKILL\.md: skill take-notes: written by hermit for the adapter 'notes'/,
    );
    await deploy(s, { hosts: ["claude"], remove: true });
    assert.deepEqual([...snapshot(s.project, []).keys()], []);
  });

  it("a role the adapter no longer has is removed on the next deploy", async () => {
    const adapter = path.join(s.root, "adapter");
    cpSync(GOLDEN_ADAPTER, adapter, { recursive: true });
    await deploy(s, { adapter, hosts: ["claude"] });
    const role = path.join(s.project, ".claude", "agents", "archivist.md");
    assert.ok(existsSync(role));
    rmSync(path.join(adapter, "roles", "archivist.md"));
    const r = await deploy(s, { adapter, hosts: ["claude"] });
    assert.equal(r.hosts[0].items.find((i) => i.what === "role archivist")?.status, "removed");
    assert.equal(existsSync(role), false);
    assert.equal(
      existsSync(path.join(s.project, ".claude", "agents")),
      false,
      "the directory hermit made goes too",
    );
    await deploy(s, { adapter, remove: true, hosts: [] });
    assert.deepEqual([...snapshot(s.project, []).keys()], []);
  });
});

describe("dry run, screening, host selection", () => {
  const s = sandbox();
  after(s.cleanup);

  it("--dry-run prints a unified diff and writes nothing", async () => {
    const r = await deploy(s, { hosts: ["claude", "codex"], dryRun: true });
    assert.deepEqual([...snapshot(s.project, []).keys()], []);
    assert.match(r.diff!, /^--- \/dev\/null\n\+\+\+ b\/\.mcp\.json\n/m);
    assert.match(r.diff!, /^\+\[mcp_servers\.notes\]$/m);
    assert.ok(r.changed.some((c) => c.file.endsWith(".mcp.json") && c.change === "created"));
  });

  it("a manifest screening refuses is not deployed: exit 4, nothing written", async () => {
    const adapter = path.join(s.root, "hostile");
    mkdirSync(adapter);
    cpSync(path.join(fixtures, "hostile", "persist-authorized-keys.yaml"), path.join(adapter, "hermit.yaml"));
    await rejects(
      deploy(s, { adapter, hosts: ["claude"] }),
      4,
      /refused: mcp_servers\.evil: .*\.ssh[\s\S]*nothing was written/,
    );
    assert.deepEqual([...snapshot(s.project, []).keys()], []);
  });

  it("--host all takes the hosts with files in the project (convert: the user's), and says so when there is none", async () => {
    await rejects(deploy(s, { hosts: ["all"] }), 2, /no host has files in .* yet/);
    await rejects(deploy(s, { hosts: ["all"], scope: "user" }), 2, /no host's configuration found/);
    mkdirSync(path.join(s.home, ".codex"));
    await rejects(deploy(s, { hosts: ["all"] }), 2, /e\.g\. --host codex \(set up for your user/);
    mkdirSync(path.join(s.project, ".cursor"));
    writeFileSync(path.join(s.project, "GEMINI.md"), "# ours\n");
    const r = await deploy(s, { hosts: ["all"], dryRun: true });
    assert.deepEqual(r.hosts.map((h) => h.host), ["cursor", "gemini"]);
    assert.deepEqual(r.detected?.map((d) => path.relative(s.project, d.sign)), [".cursor", "GEMINI.md"]);
    const user = await deploy(s, { hosts: ["all"], scope: "user", dryRun: true });
    assert.deepEqual(user.hosts.map((h) => h.host), ["codex"]);
    rmSync(path.join(s.project, "GEMINI.md"));
    await rejects(deploy(s, { hosts: ["claude", "nope"] }), 2, /unknown host 'nope'/);
  });
});

describe("--host all and the record", () => {
  const s = sandbox();
  after(s.cleanup);

  it("a host the adapter is on record for here counts: Hermes in a project leaves only AGENTS.md", async () => {
    const adapter = goldenCopy(s.root, "no-roles", (y) => y.replace(/^ {2}roles: .*\n/m, ""));
    const first = await deploy(s, { adapter, hosts: ["hermes"] });
    assert.deepEqual(first.changed.map((c) => path.relative(s.project, c.file)), ["AGENTS.md"]);
    mkdirSync(path.join(s.project, ".cursor"));
    const again = await deploy(s, { adapter, hosts: ["all"], dryRun: true });
    assert.deepEqual(again.hosts.map((h) => h.host), ["hermes", "cursor"]);
    assert.equal(path.relative(s.project, again.detected![0].sign), path.join(".hermit", "deployed.json"));
  });
});

describe("name budget", () => {
  const s = sandbox();
  after(s.cleanup);

  it("warns per host when mcp__<adapter>__<tool> passes the host's cap (Cursor 60, others 64)", async () => {
    const tool = "list_notes_with_a_name_long_enough_for_cursor_xxx"; // mcp__notes__… is 61 characters
    const adapter = goldenCopy(s.root, "long", (y) => y.replaceAll("list_notes", tool));
    const r = await deploy(s, { adapter, hosts: ["claude", "cursor"], dryRun: true });
    assert.deepEqual(r.hosts.find((h) => h.host === "claude")?.warnings, []);
    assert.match(
      r.hosts.find((h) => h.host === "cursor")!.warnings.join("\n"),
      /is 61 characters; Cursor caps tool names at 60/,
    );
  });
});

describe("host specifics", () => {
  const s = sandbox();
  after(s.cleanup);

  it("Claude Code: a new CLAUDE.md next to an AGENTS.md imports it, so Claude keeps reading it", async () => {
    writeFileSync(path.join(s.project, "AGENTS.md"), "# Team rules\n");
    await deploy(s, { hosts: ["claude"] });
    const claudeMd = readFileSync(path.join(s.project, "CLAUDE.md"), "utf8");
    assert.match(claudeMd, /^@AGENTS\.md$/m);
    assert.deepEqual((await deploy(s, { hosts: ["claude"] })).changed, []);
    await deploy(s, { hosts: ["claude"], remove: true });
    assert.deepEqual([...snapshot(s.project, []).keys()], ["AGENTS.md"]);
  });

  it("Claude Code after Codex: an AGENTS.md holding only hermit's block is not imported (the context once)", async () => {
    rmSync(path.join(s.project, "AGENTS.md"));
    await deploy(s, { hosts: ["codex"] });
    await deploy(s, { hosts: ["claude"] });
    const claudeMd = readFileSync(path.join(s.project, "CLAUDE.md"), "utf8");
    assert.doesNotMatch(claudeMd, /@AGENTS\.md/);
    assert.match(claudeMd, /hermit:notes begin/);
    await deploy(s, { hosts: ["codex"], remove: true });
    assert.doesNotMatch(
      readFileSync(path.join(s.project, "CLAUDE.md"), "utf8"),
      /@AGENTS/,
      "nothing dangling",
    );
    await deploy(s, { hosts: ["claude"], remove: true });
    assert.deepEqual([...snapshot(s.project, []).keys()], []);
    writeFileSync(path.join(s.project, "AGENTS.md"), "# Team rules\n");
  });

  it("writes through a symlinked config file inside the project and keeps the link", async () => {
    const real = path.join(s.project, "config", "mcp.json");
    mkdirSync(path.dirname(real), { recursive: true });
    writeFileSync(real, "{}\n");
    rmSync(path.join(s.project, "AGENTS.md"));
    symlinkSync(real, path.join(s.project, ".mcp.json"));
    await deploy(s, { hosts: ["claude"] });
    assert.ok(lstatSync(path.join(s.project, ".mcp.json")).isSymbolicLink());
    assert.match(readFileSync(real, "utf8"), /"notes"/);
    await deploy(s, { hosts: ["claude"], remove: true });
    assert.equal(readFileSync(real, "utf8"), "{}\n");
    rmSync(path.join(s.project, "config"), { recursive: true });
    rmSync(path.join(s.project, ".mcp.json"));
  });

  it("a broken config file is refused with exit 2 and nothing is written", async () => {
    const t = sandbox();
    try {
      copyTree(path.join(fixtures, "hosts", "codex", "project", "before"), t.project);
      writeFileSync(path.join(t.project, ".codex", "config.toml"), "[mcp_servers.docs\n");
      await rejects(
        deploy(t, { hosts: ["codex"] }),
        2,
        /config\.toml is not valid TOML.*nothing was written/,
      );
      assert.equal(existsSync(path.join(t.project, ".hermit")), false);
      assert.equal(existsSync(path.join(t.project, ".agents")), false);
    } finally {
      t.cleanup();
    }
  });
});
