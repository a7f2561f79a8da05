/**
 * A tool list fresh for 30 days (`ttlMs` 2,592,000,000): a timer cannot wait longer than 2^31 - 1
 * ms (about 24.8 days) and fires at once past it, so hermit re-listed the server's tools about
 * every millisecond (680 listings in 3 s, a log line and a schema-cache write each). It now lists
 * once and waits.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { fixtures } from "../helpers/hermit.ts";
import { connectServe, textOf } from "../helpers/mcp.ts";
import { Reaper } from "../helpers/procs.ts";
import { tempDir } from "../helpers/tmp.ts";

const scripted = path.join(fixtures, "servers", "scripted.mjs");

describe("a tool list whose ttlMs is longer than a timer can wait", () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  it("is listed once, not again and again", async () => {
    writeFileSync(
      path.join(tmp.path, "hermit.yaml"),
      `name: month
exports: { tools: [echo] }
mcp_servers:
  s: { command: node, args: [${JSON.stringify(scripted)}], env: { TTL_MS: "2592000000" } }
`,
    );
    const s = await connectServe(tmp.path);
    reaper.track(s.pid);
    try {
      await new Promise((r) => setTimeout(r, 1500));
      const r = await s.client.callTool({ name: "echo", arguments: { text: "v" } });
      assert.equal(textOf(r), "echo: v (listings 1)", s.stderr().slice(-2000));
      assert.doesNotMatch(s.stderr(), /ttlMs ran out/);
    } finally {
      await s.close();
    }
  });
});
