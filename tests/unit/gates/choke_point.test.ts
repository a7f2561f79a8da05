/**
 * The choke point, statically: every entry path into hermit puts the same session server
 * (src/mcp/server.ts) in front of the one gateway, and nothing else reaches a tool, an upstream
 * or a command. This test lists the places in src/ that create a session server, maps each to the
 * entry path tests/e2e/gates.test.ts drives through the real binary, and fails when a new one
 * appears (add it to ENTRY_PATHS there, then here) or when code outside the gateway calls tools.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { root } from "../../helpers/hermit.ts";

function sources(dir = path.join(root, "src")): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? sources(path.join(dir, d.name)) : d.name.endsWith(".ts") ? [path.join(dir, d.name)] : []
  );
}

/** Source files (relative, /-separated) whose code (comments stripped) matches `re`. */
function using(re: RegExp): string[] {
  return sources().filter((f) => re.test(readFileSync(f, "utf8").replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "")))
    .map((f) => path.relative(root, f).split(path.sep).join("/")).sort();
}

/** Each place that serves hosts, and the entry path(s) the e2e test drives through it. */
const ENTRY_POINTS: Record<string, string[]> = {
  "src/mcp/session.ts": ["stdio serve"],
  "src/mcp/inprocess.ts": ["hermit call"],
  "src/service/sessions.ts": ["HTTP service", "relay"],
};

describe("the choke point", () => {
  it("every creator of a session server is a known entry path", () => {
    const creators = using(/\bcreateSessionServer\s*\(/).filter((f) => f !== "src/mcp/server.ts");
    assert.deepEqual(creators, Object.keys(ENTRY_POINTS).sort());
  });

  it("every entry path is driven end to end by tests/e2e/gates.test.ts", () => {
    const e2e = readFileSync(path.join(root, "tests", "e2e", "gates.test.ts"), "utf8");
    for (const entry of Object.values(ENTRY_POINTS).flat()) {
      assert.ok(e2e.includes(`entry: "${entry}"`), `gates.test.ts has no entry path "${entry}"`);
    }
  });

  it("only the session server is an MCP server", () => {
    assert.deepEqual(using(/\bnew\s+(?:Server|McpServer)\s*\(/), ["src/mcp/server.ts"]);
  });

  it("only the session server calls the gateway's tools, resources and prompts", () => {
    assert.deepEqual(using(/\bgateway\.(?:callTool|callToolDetailed)\s*\(/), ["src/mcp/server.ts"]);
    assert.deepEqual(using(/\bgateway\.content\.\w+\s*\(/), ["src/mcp/server.ts"]);
  });

  it("only the gateway runs command tools and calls upstream tools", () => {
    assert.deepEqual(using(/\brunCommandTool\s*\(/).filter((f) => f !== "src/mcp/command_tool.ts"), [
      "src/mcp/gateway.ts",
    ]);
    assert.deepEqual(using(/\bupstream\.callTool\s*\(/), ["src/mcp/gateway.ts"]);
    // the gateway (logging/setLevel) and its content router (resources, prompts, completion)
    assert.deepEqual(using(/\.withClient\s*\(/).filter((f) => f !== "src/mcp/upstream.ts"), [
      "src/mcp/gateway.ts",
      "src/mcp/gateway_content.ts",
    ]);
  });

  it("the gateway applies the gates (behaviour is proven by the e2e tests; this catches a removal)", () => {
    const gateway = readFileSync(path.join(root, "src", "mcp", "gateway.ts"), "utf8");
    for (
      const gate of [
        "screenManifest(",
        "safeMode(",
        "needsApproval(",
        "sanitizeResult(",
        "sanitizeErrorMessage(",
      ]
    ) {
      assert.ok(gateway.includes(gate), `src/mcp/gateway.ts no longer calls ${gate}`);
    }
    // gate 9: the catalog leaves out what hermit.lock withholds, and the gateway refuses a call to it
    const catalog = readFileSync(path.join(root, "src", "mcp", "gateway_catalog.ts"), "utf8");
    assert.ok(catalog.includes("lock?.judge("), "src/mcp/gateway_catalog.ts no longer asks the lock");
    assert.ok(gateway.includes("#catalog.withheld("), "src/mcp/gateway.ts no longer refuses withheld tools");
    assert.ok(
      (gateway.match(/sanitizeResult\(/g) ?? []).length >= 2,
      "both the command and the upstream result",
    );
  });
});

describe("the gates are pure", () => {
  it("src/gates imports only types and other gates, and touches no process or runtime API", () => {
    for (const f of sources(path.join(root, "src", "gates"))) {
      const text = readFileSync(f, "utf8");
      for (const m of text.matchAll(/^import\s+(type\s+)?[^;]*?from\s+"([^"]+)";/gms)) {
        const ok = m[1] !== undefined || m[2].startsWith("./");
        assert.ok(ok, `${path.basename(f)} imports ${m[2]} for its values`);
      }
      assert.doesNotMatch(text, /\bprocess\.|\bDeno\.|\bBun\.|\brequire\(/, path.basename(f));
    }
  });
});
