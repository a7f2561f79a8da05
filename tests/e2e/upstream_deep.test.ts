/**
 * A tool definition nested too deep for hermit to walk (an input schema of 20,000 levels, 200 KB):
 * every gate that reads a definition (sanitization, the description scan, the lock's hash) walks
 * it, and the stack ran out while the catalog was built, so one upstream's tools/list ended the
 * whole session (`error: unexpected: Maximum call stack size exceeded`, every tool gone). Now
 * that one tool is not served, said in the log, and the others are.
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

describe("an upstream tool whose definition nests too deep", () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  it("is not served; the session and its other tools are", async () => {
    writeFileSync(
      path.join(tmp.path, "hermit.yaml"),
      `name: deep
exports: { tools: [echo, deep, hello] }
tools:
  hello: { description: Says hi, input: { type: object }, run: [echo, hi] }
mcp_servers:
  s: { command: node, args: [${JSON.stringify(scripted)}], env: { DEEP_SCHEMA: "20000" } }
`,
    );
    const s = await connectServe(tmp.path);
    reaper.track(s.pid);
    try {
      const { tools } = await s.client.listTools();
      assert.deepEqual(tools.map((t) => t.name), ["echo", "hello"], s.stderr());
      assert.equal(
        textOf(await s.client.callTool({ name: "echo", arguments: { text: "v" } })),
        "echo: v (listings 1)",
      );
      assert.equal(textOf(await s.client.callTool({ name: "hello", arguments: {} })), "hi");
      assert.match(
        s.stderr(),
        /mcp_servers\.s: tool 'deep' is not served: its definition nests deeper than \d+ levels/,
      );
    } finally {
      await s.close();
    }
  });
});
