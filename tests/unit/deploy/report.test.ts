/**
 * Deploy's report in words: a dry run says what it would do, an entry added to a file that was
 * there is "added … to", a file hermit makes is "created", a removal that empties the record does
 * not send the reader to the record it just deleted.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { renderReport } from "../../../src/deploy/report.ts";
import { deploy, sandbox } from "../../helpers/deploy.ts";

/** The report's lines for the claude host (between its title and the next unindented line). */
function claudeLines(text: string): string[] {
  const lines = text.split("\n");
  const start = lines.indexOf("claude (Claude Code)");
  const out: string[] = [];
  for (const l of lines.slice(start + 1)) {
    if (!l.startsWith("  ")) break;
    if (!/^ {2}(note|reconnect|warning|not supported):/.test(l)) out.push(l.trim());
  }
  return out;
}

describe("deploy's report", () => {
  it("into an existing .mcp.json: 'would add' in a dry run, then 'added … to'; --remove names no record it deleted", async () => {
    const s = sandbox();
    after(s.cleanup);
    writeFileSync(path.join(s.project, ".mcp.json"), `{ "mcpServers": { "other": { "command": "x" } } }\n`);

    const dry = renderReport(await deploy(s, { hosts: ["claude"], dryRun: true }));
    assert.deepEqual(claudeLines(dry).slice(0, 2), [
      "would add MCP server notes to .mcp.json",
      "would create CLAUDE.md with context",
    ]);
    assert.doesNotMatch(dry, /^ {2}(created|added|updated|removed)\b/m, "a dry run did nothing");

    const done = renderReport(await deploy(s, { hosts: ["claude"] }));
    assert.deepEqual(claudeLines(done).slice(0, 2), [
      "added MCP server notes to .mcp.json",
      "created CLAUDE.md with context",
    ]);
    assert.match(done, /^\d+ files changed; record in .*\.hermit\/deployed\.json$/m);

    const again = renderReport(await deploy(s, { hosts: ["claude"] }));
    assert.match(claudeLines(again)[0], /^unchanged: MCP server notes in \.mcp\.json$/);
    assert.match(again, /^nothing changed$/m);

    const dryRemove = renderReport(await deploy(s, { remove: true, dryRun: true }));
    assert.deepEqual(claudeLines(dryRemove).slice(0, 2), [
      "would remove MCP server notes from .mcp.json",
      "would remove context and CLAUDE.md (hermit had created it)",
    ]);

    const removed = await deploy(s, { remove: true });
    const text = renderReport(removed);
    assert.deepEqual(claudeLines(text).slice(0, 2), [
      "removed MCP server notes from .mcp.json",
      "removed context and CLAUDE.md (hermit had created it)",
    ]);
    assert.equal(removed.recordRemoved, true);
    assert.doesNotMatch(text, /record in /);
    assert.match(text, /nothing hermit wrote is left here, so its record \(.*deployed\.json\) is gone too$/m);
  });

  it("into an empty project: 'created .mcp.json with …'", async () => {
    const s = sandbox();
    after(s.cleanup);
    const text = renderReport(await deploy(s, { hosts: ["claude"] }));
    assert.equal(claudeLines(text)[0], "created .mcp.json with MCP server notes");
  });
  it("an entry the user took out by hand: --remove says it was no longer there, not that it removed it", async () => {
    const s = sandbox();
    after(s.cleanup);
    const file = path.join(s.project, ".mcp.json");
    writeFileSync(file, `{ "mcpServers": { "other": { "command": "x" } } }\n`);
    await deploy(s, { hosts: ["claude"] });
    writeFileSync(file, `{ "mcpServers": { "other": { "command": "x" } } }\n`); // hermit's entry taken out
    const dry = renderReport(await deploy(s, { remove: true, dryRun: true }));
    // before: "would remove MCP server notes from .mcp.json", then "removed MCP server notes from .mcp.json"
    assert.equal(claudeLines(dry)[0], "MCP server notes: no longer in .mcp.json (nothing to remove)");
    const text = renderReport(await deploy(s, { remove: true }));
    assert.equal(claudeLines(text)[0], "MCP server notes: no longer in .mcp.json (nothing to remove)");
    assert.equal(readFileSync(file, "utf8"), `{ "mcpServers": { "other": { "command": "x" } } }\n`);
  });
});
