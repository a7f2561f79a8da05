/**
 * Progress from an upstream that reports and answers at once: the scripted server writes a
 * tool's progress notification and its result in one write, so hermit reads both in one read.
 * The host still gets the progress, ahead of the result (the SDK's client used to drop it: it
 * handles a notification a microtask after it arrives, and forgets the call's progress handler
 * as soon as its result arrives).
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { fixtures } from "../helpers/hermit.ts";
import { connectServe, textOf } from "../helpers/mcp.ts";
import { Reaper } from "../helpers/procs.ts";
import { tempDir } from "../helpers/tmp.ts";

const scripted = path.join(fixtures, "servers", "scripted.mjs");

/**
 * This test's host has the same SDK client, so it would drop the progress too when hermit's two
 * lines reach it in one read: it hands responses on a microtask later, as hermit does towards its
 * upstreams, so that what it is shown is only what hermit sent.
 */
function responsesAfterNotifications(client: Client): void {
  const transport = client.transport!;
  const handle = transport.onmessage!;
  transport.onmessage = (m, extra) => {
    if ("method" in m) handle(m, extra);
    else queueMicrotask(() => handle(m, extra));
  };
}

describe("progress an upstream sends with its result", () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  it("reaches the host, before the result", async () => {
    writeFileSync(
      path.join(tmp.path, "hermit.yaml"),
      `name: burst
exports: { tools: [echo] }
mcp_servers:
  s: { command: node, args: [${JSON.stringify(scripted)}], env: { PROGRESS: "1" } }
`,
    );
    const s = await connectServe(tmp.path);
    reaper.track(s.pid);
    try {
      responsesAfterNotifications(s.client);
      const seen: string[] = [];
      const r = await s.client.callTool({ name: "echo", arguments: { text: "v" } }, undefined, {
        onprogress: (p) => seen.push(`progress ${p.progress}/${p.total} ${p.message}`),
      });
      seen.push(textOf(r));
      assert.deepEqual(seen, ["progress 1/1 done", "echo: v (listings 1)"], s.stderr());
    } finally {
      await s.close();
    }
  });
});
