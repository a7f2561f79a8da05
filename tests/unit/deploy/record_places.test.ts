/**
 * A project's deploy record is taken only for places a host writes: the files of MCP entries and
 * context blocks, and the folders of skill, role and rule files. Anyone may commit a record to a
 * repository; one naming a file git does not ship (`.git/config`, `node_modules/…`) with its known
 * contents made a deploy or `--remove` overwrite it with the record's `previous` (a `core.fsmonitor`
 * runs at the next git command) or delete it. Refused before anything is written, in one line.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { HermitError } from "../../../src/errors.ts";
import { hostPlaces, placeProblem } from "../../../src/deploy/places.ts";
import { sha256 } from "../../../src/deploy/state.ts";
import { HOST_IDS } from "../../../src/hosts/types.ts";
import { deploy, sandbox } from "../../helpers/deploy.ts";

const GIT_CONFIG = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n";

/** `file` (in the project) with `text`, and a record item claiming it, planted after a real deploy. */
async function planted(s: ReturnType<typeof sandbox>, file: string, text: string, previous?: string) {
  await deploy(s, { hosts: ["claude"] });
  mkdirSync(path.dirname(path.join(s.project, file)), { recursive: true });
  writeFileSync(path.join(s.project, file), text);
  const recordFile = path.join(s.project, ".hermit", "deployed.json");
  const record = JSON.parse(readFileSync(recordFile, "utf8"));
  record.items.push({
    kind: "file",
    file,
    what: "skill x",
    owners: ["notes/claude"],
    hash: sha256(new TextEncoder().encode(text)),
    ...(previous === undefined ? {} : { previous: btoa(previous) }),
  });
  writeFileSync(recordFile, JSON.stringify(record));
  return recordFile;
}

async function refused(p: Promise<unknown>, file: string): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof HermitError, String(err));
    assert.equal(err.exitCode, 2);
    assert.match(err.message, new RegExp(`items\\[\\d+\\] is for "${file}", where no host keeps`));
    assert.equal(err.message.split("\n").length, 1);
    return true;
  });
}

describe("a project's deploy record is taken only for places a host writes", () => {
  for (const remove of [true, false]) {
    it(`.git/config with a recorded 'previous': refused, not overwritten (${remove ? "--remove" : "deploy"})`, async () => {
      const s = sandbox();
      try {
        await planted(s, ".git/config", GIT_CONFIG, "[core]\n\tfsmonitor = touch PWNED\n");
        await refused(deploy(s, remove ? { remove: true } : { hosts: ["claude"] }), ".git/config");
        assert.equal(readFileSync(path.join(s.project, ".git", "config"), "utf8"), GIT_CONFIG);
      } finally {
        s.cleanup();
      }
    });
  }

  it("a file with known contents and no 'previous' (node_modules/…): refused, not deleted", async () => {
    const s = sandbox();
    try {
      const file = "node_modules/left-pad/index.js";
      await planted(s, file, "module.exports = 1;\n");
      await refused(deploy(s, { remove: true }), file);
      assert.ok(existsSync(path.join(s.project, file)));
    } finally {
      s.cleanup();
    }
  });

  it("hermit's own places are taken as before: every host's items are removed", async () => {
    const s = sandbox();
    try {
      writeFileSync(path.join(s.project, "AGENTS.md"), "# the project's own\n"); // Claude's import block too
      await deploy(s, { hosts: [...HOST_IDS] });
      await deploy(s, { remove: true });
      assert.equal(existsSync(path.join(s.project, ".hermit", "deployed.json")), false);
    } finally {
      s.cleanup();
    }
  });

  it("a host that picks its file by which exists counts with the one it wrote, whatever exists now", async () => {
    // OpenCode writes the first of opencode.jsonc, opencode.json, .opencode/opencode.json{c,} there is
    const s = sandbox();
    try {
      mkdirSync(path.join(s.project, ".opencode"));
      writeFileSync(path.join(s.project, ".opencode", "opencode.json"), "{}\n");
      await deploy(s, { hosts: ["opencode"] });
      const inner = JSON.parse(readFileSync(path.join(s.project, ".opencode", "opencode.json"), "utf8"));
      assert.ok(inner.mcp?.notes, "deployed into .opencode/opencode.json");
      writeFileSync(path.join(s.project, "opencode.json"), "{}\n"); // now OpenCode would pick this one
      await deploy(s, { remove: true });
      const after = JSON.parse(readFileSync(path.join(s.project, ".opencode", "opencode.json"), "utf8"));
      assert.equal(after.mcp?.notes, undefined, "removed from where it was written");
    } finally {
      s.cleanup();
    }
  });

  it("a host that picks its context file by its settings (Gemini's context.fileName) counts with the one it wrote", async () => {
    const s = sandbox();
    try {
      mkdirSync(path.join(s.project, ".gemini"));
      const settings = path.join(s.project, ".gemini", "settings.json");
      writeFileSync(settings, '{"context":{"fileName":"TEAM.md"}}\n');
      await deploy(s, { hosts: ["gemini", "claude"] });
      assert.match(readFileSync(path.join(s.project, "TEAM.md"), "utf8"), /hermit:notes begin/);
      writeFileSync(settings, '{"context":{}}\n'); // the user changed it: Gemini reads GEMINI.md now
      await deploy(s, { hosts: ["claude"], remove: true }); // was refused: "hermit never wrote it"
      await deploy(s, { remove: true });
      assert.equal(existsSync(path.join(s.project, "TEAM.md")), false, "hermit had created it");
    } finally {
      s.cleanup();
    }
  });

  it("the places: each host's config and context files, and the folders under which its files go", () => {
    const project = path.resolve("/p");
    const t = {
      scope: "project" as const,
      platform: process.platform,
      env: {},
      home: path.resolve("/h"),
      project,
    };
    const places = hostPlaces(t, { exists: () => false, read: () => undefined });
    const at = (...p: string[]) => path.join(project, ...p);
    for (
      const f of [
        ".mcp.json",
        "CLAUDE.md",
        "AGENTS.md",
        ".cursor/mcp.json",
        "opencode.json",
        "opencode.jsonc",
      ]
    ) {
      assert.equal(placeProblem(places, "entry", at(f)), undefined, f);
    }
    for (
      const f of [
        ".claude/skills/x/SKILL.md",
        ".claude/agents/r.md",
        ".cursor/rules/a.mdc",
        ".agents/skills/x/y/z.sh",
      ]
    ) {
      assert.equal(placeProblem(places, "file", at(f)), undefined, f);
    }
    for (
      const f of [
        ".git/config",
        "package.json",
        "node_modules/x/index.js",
        ".claude/settings.json",
        ".claude/skills",
      ]
    ) {
      assert.notEqual(placeProblem(places, f.endsWith(".json") ? "entry" : "file", at(f)), undefined, f);
    }
    assert.notEqual(
      placeProblem(places, "file", at(".mcp.json")),
      undefined,
      "an entry's file is not a root",
    );
  });
});
