/**
 * The MCP conformance suite (@modelcontextprotocol/conformance, every server scenario) against
 * hermit's standalone HTTP service, which re-exports an upstream built to the suite's
 * requirements. The suite cannot send a bearer token, so a loopback proxy adds it; Host and Origin
 * pass through, so DNS-rebinding protection is hermit's own. `serve.stream_seconds: 1` makes
 * hermit close a streamed answer after a second, which `server-sse-polling` (SEP-1699) needs to
 * exercise resumption with Last-Event-ID. The suite needs Node ≥ 22, so it runs under Bun.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { startAuthProxy } from "../helpers/auth_proxy.ts";
import { bunPath, fixtures, root, runCommand } from "../helpers/hermit.ts";
import { Reaper } from "../helpers/procs.ts";
import { startService } from "../helpers/service.ts";
import { tempDir } from "../helpers/tmp.ts";

const TOOLS = [
  "test_simple_text",
  "test_image_content",
  "test_audio_content",
  "test_embedded_resource",
  "test_multiple_content_types",
  "test_tool_with_logging",
  "test_error_handling",
  "test_tool_with_progress",
  "test_sampling",
  "test_elicitation",
  "test_elicitation_sep1034_defaults",
  "test_elicitation_sep1330_enums",
  "json_schema_2020_12_tool",
  "test_reconnection",
];

describe("MCP conformance suite against the standalone service", () => {
  const tmp = tempDir("hermit-conformance-");
  const reaper = new Reaper();
  let proxy: { url: string; close(): Promise<void> };

  before(async () => {
    writeFileSync(
      path.join(tmp.path, "hermit.yaml"),
      `name: conformance
exports: { tools: [${TOOLS.join(", ")}] }
mcp_servers:
  everything:
    command: node
    args: [${JSON.stringify(path.join(fixtures, "servers", "conformance_everything.mjs"))}]
serve:
  stream_seconds: 1
`,
    );
    const svc = await startService(tmp.path, {}, { reaper });
    proxy = await startAuthProxy(svc.url, svc.token);
  });
  after(async () => {
    await proxy?.close();
    await reaper.reap();
    tmp.cleanup();
  });

  it("passes every server scenario", async () => {
    const suite = path.join(root, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");
    const r = await runCommand(bunPath()!, [
      suite,
      "server",
      "--url",
      proxy.url,
      "--suite",
      "all",
      "-o",
      path.join(tmp.path, "results"),
    ], {
      cwd: tmp.path,
      timeoutMs: 240_000,
    });
    const out = r.stdout + r.stderr;
    const failed = out.split("\n").filter((l) => l.startsWith("✗"));
    assert.deepEqual(failed, [], out);
    assert.match(out, /Total: \d+ passed, 0 failed/);
    assert.equal(r.code, 0, out);
    for (
      const scenario of [
        "server-initialize",
        "tools-call-sampling",
        "tools-call-elicitation",
        "resources-subscribe",
        "dns-rebinding-protection",
        "server-sse-polling",
      ]
    ) {
      assert.match(out, new RegExp(`✓ ${scenario}: [1-9]\\d* passed, 0 failed`), scenario);
    }
  });
});
