/**
 * Reading what `hermit serve` said (JSON log lines) for the health rule: an upstream that could not
 * be started is the problem, naming the exported tools it leaves out; without tools left out it
 * is a warning; a tool no failure explains keeps its own reason; other warnings stay warnings.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseManifest } from "../../../src/manifest/load.ts";
import { missingToolFindings, ServeLog } from "../../../src/check/serve_log.ts";

const { manifest } = parseManifest(
  `name: t
exports: { tools: [read_file, write_file, remember, hello] }
tools:
  hello: { run: [echo] }
mcp_servers:
  fs: { command: npx-typo, tools: { include: ["*_file"] } }
  memory: { command: node, tools: { include: [remember] } }
  spare: { command: nope, tools: { include: [other] } }
`,
  "/tmp/t/hermit.yaml",
  "/tmp/t",
);

const line = (level: string, message: string, event?: unknown) => JSON.stringify({ level, message, event });

describe("what serve said", () => {
  it("sorts events, warnings and noise", () => {
    const log = new ServeLog();
    log.add(
      line("warn", "mcp_servers.fs: x (attempt 1; next in 30 s)", {
        kind: "upstream-failed",
        server: "fs",
        reason: "x",
      }),
    );
    log.add(
      line("warn", "exports.tools lists 'remember'…", { kind: "not-served", tool: "remember", why: "y" }),
    );
    log.add(line("warn", "mcp_servers.memory: ${TOKEN} not set; passed on literally"));
    log.add(line("error", "refused: mcp_servers.spare: shell payload"));
    log.add(line("info", "[fs] hello from stderr"));
    log.add("a line that is not JSON");
    assert.deepEqual(log.failures, [{ server: "fs", reason: "x" }]);
    assert.deepEqual([...log.notServed], [["remember", "y"]]);
    assert.deepEqual(log.warnings, ["mcp_servers.memory: ${TOKEN} not set; passed on literally"]);
    assert.deepEqual(log.tail(2), ["[fs] hello from stderr", "a line that is not JSON"]);
  });

  it("a failed upstream is the problem for the tools it leaves out; others keep their reason", () => {
    const f = missingToolFindings(
      manifest,
      ["read_file", "write_file", "remember"],
      [{ server: "fs", reason: "command not found: 'npx-typo'" }, { server: "spare", reason: "exited" }],
      new Map([["remember", "mcp_servers.memory is still starting"]]),
    );
    assert.deepEqual(f.map((x) => [x.level, x.message]), [
      [
        "problem",
        "live: mcp_servers.fs could not be started: command not found: 'npx-typo'; not served: read_file, write_file",
      ],
      ["warning", "live: mcp_servers.spare could not be started: exited"],
      ["problem", "live: exported but not served: remember (mcp_servers.memory is still starting)"],
    ]);
  });

  it("a server refused before the start is not reported again, however serve words it", () => {
    const refusal =
      "refused: mcp_servers.fs: the sandbox is required but files are not confined; it was not started";
    const reason =
      "refused: mcp_servers.fs: the sandbox is required but files are not confined; more; it was not started";
    const failures = [{ server: "fs", reason }, { server: "spare", reason: "refused: mcp_servers.spare: x" }];
    const f = missingToolFindings(manifest, ["read_file"], failures, new Map(), new Set([refusal]));
    assert.deepEqual(f.map((x) => [x.level, x.message]), [
      ["problem", "live: not served, as mcp_servers.fs was refused (above): read_file"],
      ["warning", "live: mcp_servers.spare could not be started: refused: mcp_servers.spare: x"],
    ]);
    const none = missingToolFindings(manifest, [], failures.slice(0, 1), new Map(), new Set([refusal]));
    assert.deepEqual(none, []);
  });
});
