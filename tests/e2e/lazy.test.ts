/**
 * Lazy start from the schema cache, from the compiled binary: with a warm cache `hermit serve`
 * answers `tools/list` without starting the upstream (counted in /proc); the first call starts
 * it; a tool the live server no longer has is removed and the host told (list_changed).
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { fixtures } from "../helpers/hermit.ts";
import { connectServe, textOf } from "../helpers/mcp.ts";
import { processesWhere, Reaper, waitFor } from "../helpers/procs.ts";
import { tempDir } from "../helpers/tmp.ts";

const scripted = path.join(fixtures, "servers", "scripted.mjs");

/** The scripted upstream's live processes started for this suite (MARKER in their environment). */
function upstreamPids(marker: string): number[] {
  return processesWhere({ cmdline: scripted, environ: `MARKER=${marker}\0` });
}

describe("lazy start from the schema cache", () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  const home = path.join(tmp.path, "home");
  const marker = path.basename(tmp.path);
  writeFileSync(
    path.join(tmp.path, "hermit.yaml"),
    `name: lazy
exports: { tools: [echo, ghost] }
mcp_servers:
  s:
    command: node
    args: [${JSON.stringify(scripted)}]
    env: { MARKER: "\${MARKER}", TOOLS: "\${TOOLS}", PROMPTS: "1" }
    lazy: true
`,
  );
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  it("a cold cache connects eagerly and writes the cache (0600)", async () => {
    const s = await connectServe(tmp.path, {
      env: { HERMIT_HOME: home, MARKER: marker, TOOLS: "echo,ghost" },
    });
    reaper.track(s.pid);
    assert.deepEqual((await s.client.listTools()).tools.map((t) => t.name), ["echo", "ghost"]);
    assert.equal(upstreamPids(marker).length, 1, "no cache yet: the upstream was started");
    await s.close();
    const files = readdirSync(path.join(home, "schema-cache"));
    assert.equal(files.length, 1);
    assert.match(files[0], /^[0-9a-f]{16}\.json$/);
  });

  it("a warm cache answers tools/list without starting the upstream; the first call starts it", async () => {
    await waitFor(() => upstreamPids(marker).length === 0, {
      timeoutMs: 10_000,
      what: "the first session's upstream to exit",
    });
    // the live server now offers only echo: ghost exists only in the cache
    const s = await connectServe(tmp.path, { env: { HERMIT_HOME: home, MARKER: marker, TOOLS: "echo" } });
    reaper.track(s.pid);
    let changed = 0;
    s.client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
    assert.deepEqual((await s.client.listTools()).tools.map((t) => t.name), ["echo", "ghost"]);
    assert.equal(
      upstreamPids(marker).length,
      0,
      "tools/list came from the cache: nothing started (not even to scan prompts)",
    );

    const r = await s.client.callTool({ name: "echo", arguments: { text: "hi" } });
    assert.match(textOf(r), /^echo: hi/);
    assert.equal(upstreamPids(marker).length, 1, "the first call started it");
    await waitFor(() => changed > 0, { timeoutMs: 5000, what: "list_changed for the vanished tool" });
    assert.deepEqual((await s.client.listTools()).tools.map((t) => t.name), ["echo"], "ghost is gone");
    await s.close();
  });
});
