/**
 * Two host files that are one file under two names, through a link inside the project (`CLAUDE.md
 * → AGENTS.md`, `.cursor/mcp.json → ../.mcp.json`: common setups). A run edits that file once: the
 * same context block serves both hosts, stays until the last of them is removed, and a second run
 * is a no-op; two hosts that want different entries in it are a conflict naming both names, with
 * nothing written. Before, each name was edited as a file of its own and the last write won.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { HermitError } from "../../../src/errors.ts";
import { deploy, sandbox, snapshot } from "../../helpers/deploy.ts";

const posix = process.platform !== "win32";
const blocks = (text: string) => text.match(/hermit:notes begin/g)?.length ?? 0;

describe("host files linked to one file", { skip: !posix && "links need privileges on Windows" }, () => {
  it("CLAUDE.md → AGENTS.md: one context block for both hosts, kept until the last goes", async () => {
    const s = sandbox();
    try {
      const agents = path.join(s.project, "AGENTS.md");
      writeFileSync(agents, "# rules\n");
      symlinkSync("AGENTS.md", path.join(s.project, "CLAUDE.md"));
      await deploy(s, { hosts: ["claude", "codex"] });
      const text = readFileSync(agents, "utf8");
      assert.equal(blocks(text), 1, text);
      assert.doesNotMatch(text, /@AGENTS\.md/, "no import of AGENTS.md into itself");
      assert.ok(lstatSync(path.join(s.project, "CLAUDE.md")).isSymbolicLink(), "the link stays a link");

      const again = await deploy(s, { hosts: ["claude", "codex"] });
      assert.deepEqual(again.changed, [], "a second run changes nothing");

      await deploy(s, { hosts: ["claude"], remove: true });
      assert.equal(blocks(readFileSync(agents, "utf8")), 1, "Codex still has its context");
      await deploy(s, { remove: true });
      assert.equal(readFileSync(agents, "utf8"), "# rules\n");
      assert.ok(lstatSync(path.join(s.project, "CLAUDE.md")).isSymbolicLink());
    } finally {
      s.cleanup();
    }
  });

  it(".cursor/mcp.json → ../.mcp.json: different entries for Claude Code and Cursor are a conflict", async () => {
    const s = sandbox();
    try {
      const mcp = path.join(s.project, ".mcp.json");
      writeFileSync(mcp, '{\n  "mcpServers": {}\n}\n');
      mkdirSync(path.join(s.project, ".cursor"));
      symlinkSync("../.mcp.json", path.join(s.project, ".cursor", "mcp.json"));
      const before = snapshot(s.project, []);
      await assert.rejects(deploy(s, { hosts: ["claude", "cursor"] }), (err: unknown) => {
        assert.ok(err instanceof HermitError, String(err));
        assert.equal(err.exitCode, 2, err.message);
        assert.match(err.message, /\.mcp\.json.*\.cursor\/mcp\.json|\.cursor\/mcp\.json.*\.mcp\.json/);
        assert.match(err.message, /nothing was written/);
        return true;
      });
      assert.deepEqual(snapshot(s.project, []), before, "nothing written");

      // one host at a time is the same conflict, not a silent takeover of the other's entry
      await deploy(s, { hosts: ["claude"] });
      const claude = readFileSync(mcp, "utf8");
      await assert.rejects(deploy(s, { hosts: ["cursor"] }), /\.cursor\/mcp\.json/);
      assert.equal(readFileSync(mcp, "utf8"), claude);
      await deploy(s, { remove: true });
      assert.equal(readFileSync(mcp, "utf8"), '{\n  "mcpServers": {}\n}\n');
    } finally {
      s.cleanup();
    }
  });
});
