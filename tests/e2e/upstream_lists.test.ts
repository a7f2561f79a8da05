/**
 * Tool lists an upstream sends that hermit could not take in its stride:
 * - a tool definition nested too deep to walk (an input schema of 20,000 levels, 200 KB): every
 *   gate that reads a definition (sanitization, the description scan, the lock's hash) walks it,
 *   and the stack ran out while the catalog was built, so one upstream's tools/list ended the whole
 *   session (`error: unexpected: Maximum call stack size exceeded`, every tool gone). Now that one
 *   tool is not served, said in the log, and the others are.
 * - a list fresh for 30 days (`ttlMs` 2,592,000,000): a timer cannot wait longer than 2^31 - 1 ms
 *   (about 24.8 days) and fires at once past it, so hermit re-listed the server's tools about every
 *   millisecond (680 listings in 3 s, a log line and a schema-cache write each). It now lists once.
 * - a list fresh for one millisecond (`ttlMs: 1`): hermit re-listed it a thousand times a second,
 *   as the server asked. A hint under a second now counts as a second.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fixtures } from "../helpers/hermit.ts";
import { connectServe, textOf } from "../helpers/mcp.ts";
import { Reaper } from "../helpers/procs.ts";
import { tempDir } from "../helpers/tmp.ts";

const scripted = path.join(fixtures, "servers", "scripted.mjs");

describe("upstream tool lists hermit must take in its stride", () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  /** An adapter in its own directory whose one upstream is the scripted server with `env`. */
  function adapter(name: string, exports: string, env: string, extra = ""): string {
    const dir = path.join(tmp.path, name);
    mkdirSync(dir);
    writeFileSync(
      path.join(dir, "hermit.yaml"),
      `name: ${name}
exports: { tools: [${exports}] }
${extra}mcp_servers:
  s: { command: node, args: [${JSON.stringify(scripted)}], env: { ${env} } }
`,
    );
    return dir;
  }

  it("a tool nested too deep is not served; the session and its other tools are", async () => {
    const dir = adapter(
      "deep",
      "echo, deep, hello",
      `DEEP_SCHEMA: "20000"`,
      "tools:\n  hello: { description: Says hi, input: { type: object }, run: [echo, hi] }\n",
    );
    const s = await connectServe(dir);
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

  it("a list whose ttlMs is longer than a timer can wait is listed once, not again and again", async () => {
    const s = await connectServe(adapter("month", "echo", `TTL_MS: "2592000000"`));
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

  it("a list fresh for a millisecond is listed about once a second, not a thousand times", async () => {
    const s = await connectServe(adapter("blink", "echo", `TTL_MS: "1"`));
    reaper.track(s.pid);
    try {
      await new Promise((r) => setTimeout(r, 1500));
      const r = await s.client.callTool({ name: "echo", arguments: { text: "v" } });
      const listings = Number(/\(listings (\d+)\)/.exec(textOf(r))?.[1]);
      assert.ok(listings >= 1 && listings <= 3, `${listings} listings in 1.5 s\n${s.stderr().slice(-2000)}`);
      assert.ok(s.stderr().split("ttlMs ran out").length - 1 <= 2, s.stderr().slice(-2000));
    } finally {
      await s.close();
    }
  });
});
