/**
 * A relay whose service is not running yet (host_launch: true) answers `initialize` and
 * `tools/list` at once from the manifest and the schema cache, before the service exists, and
 * queues the first call until the service is up. With a cold cache `tools/list` waits instead.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { fixtures, runHermit } from "../helpers/hermit.ts";
import { connectServe, textOf } from "../helpers/mcp.ts";
import { alive, Reaper, waitFor } from "../helpers/procs.ts";
import { readEndpointFile, servicePids } from "../helpers/service.ts";
import { tempDir } from "../helpers/tmp.ts";

describe("relay warm start", () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  const home = path.join(tmp.path, "state");
  writeFileSync(
    path.join(tmp.path, "hermit.yaml"),
    `name: warm
exports: { tools: [echo, note] }
tools:
  note: { description: a note, run: [echo, noted], read_only: true }
mcp_servers:
  slow:
    command: node
    args: [${JSON.stringify(path.join(fixtures, "servers", "scripted.mjs"))}]
    env: { START_DELAY_MS: "\${START_DELAY_MS}" }
serve:
  lifecycle: standalone
  host_launch: true
  idle_shutdown_seconds: 2
  instructions: SERVICE.md
`,
  );
  writeFileSync(path.join(tmp.path, "SERVICE.md"), "hermit serve . --standalone\n");
  after(async () => {
    for (const p of servicePids(tmp.path)) reaper.track(p);
    await reaper.reap();
    tmp.cleanup();
  });

  it("a cold cache: tools/list comes from the service once it is up", async () => {
    const s = await connectServe(tmp.path, { env: { HERMIT_HOME: home, START_DELAY_MS: "0" } });
    reaper.track(s.pid);
    assert.deepEqual((await s.client.listTools()).tools.map((t) => t.name), ["echo", "note"]);
    const svc = readEndpointFile(tmp.path)!.pid;
    reaper.track(svc);
    await s.close();
    const stop = await runHermit(["stop", tmp.path]);
    assert.equal(stop.code, 0, stop.stdout + stop.stderr);
    await waitFor(() => !alive(svc), { timeoutMs: 10_000, what: "the service to stop" });
  });

  it("a warm cache: initialize and tools/list are answered before the service exists; a call waits for it", async () => {
    // the upstream now takes 3 s to answer anything, so the service takes at least that long
    const s = await connectServe(tmp.path, { env: { HERMIT_HOME: home, START_DELAY_MS: "3000" } });
    reaper.track(s.pid);
    const { tools } = await s.client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ["echo", "note"]);
    assert.equal(readEndpointFile(tmp.path), undefined, "answered while no service was up yet");
    const r = await s.client.callTool({ name: "echo", arguments: { text: "after warm-up" } });
    assert.match(textOf(r), /^echo: after warm-up/);
    const ep = readEndpointFile(tmp.path);
    assert.ok(ep, "the call went to the service");
    reaper.track(ep.pid);
    await s.close();
  });
});
