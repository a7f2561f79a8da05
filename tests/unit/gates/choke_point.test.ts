/**
 * The choke point, structurally: the sources are read with the TypeScript compiler (its parser and
 * type checker, not text matching), and the test proves that
 *   - only the gateway (src/mcp/gateway.ts, and gateway_calls.ts, the call's path it alone calls)
 *     creates upstream connections, runs command tools and calls upstream tools; only its content router reads resources and prompts from upstreams;
 *   - the gateway's public surface is exactly a known list (its upstream and command-tool maps, and
 *     what it gives upstream connections, are private);
 *   - only the session server (src/mcp/server.ts) calls the gateway's tools and content, and every
 *     place that creates a session server is a known entry path that tests/e2e/gates.test.ts drives
 *     through the real binary;
 *   - the gateway applies the gates, and the gates are pure.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { before, describe, it } from "node:test";
import ts from "typescript";
import { root } from "../../helpers/hermit.ts";

function sources(dir = path.join(root, "src")): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? sources(path.join(dir, d.name)) : d.name.endsWith(".ts") ? [path.join(dir, d.name)] : []
  );
}

const rel = (f: string) => path.relative(root, f).split(path.sep).join("/");

/** Each place in src/ where `method` is called on a value of the class `owner` (by type, not name). */
interface Use {
  file: string;
  owner: string;
  member: string;
}

let program: ts.Program;
let uses: Use[];
/** `new X(...)` and calls of plain functions, by the file declaring what is constructed or called. */
let constructs: Use[];
let calls: Use[];

/** What holding an upstream connection allows. */
const UPSTREAM_MEMBERS = [
  "callTool",
  "withClient",
  "ensureConnected",
  "start",
  "startFromCache",
  "stop",
  "refreshTools",
];
/** The content router's reads of upstream resources and prompts. */
const CONTENT_MEMBERS = [
  "readResource",
  "listResources",
  "listResourceTemplates",
  "listPrompts",
  "getPrompt",
  "complete",
];
/** The members and names the guard asks about: the checker is asked only about these (it is costly). */
const MEMBERS = new Set([...UPSTREAM_MEMBERS, ...CONTENT_MEMBERS, "callToolDetailed"]);
const NAMES = new Set([
  "UpstreamConnection",
  "runCommandTool",
  "callThroughGates",
  "createSessionServer",
  "Server",
  "McpServer",
  "screenManifest",
  "safeMode",
  "sandbox",
  "needsApproval",
  "sanitizeResult",
  "sanitizeErrorMessage",
]);

function collect(): void {
  const cfg = ts.getParsedCommandLineOfConfigFile(path.join(root, "tsconfig.json"), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: () => {},
  })!;
  program = ts.createProgram(sources(), { ...cfg.options, noEmit: true, skipLibCheck: true });
  const checker = program.getTypeChecker();
  uses = [];
  constructs = [];
  calls = [];
  const declaredIn = (id: ts.Identifier) => {
    let s = checker.getSymbolAtLocation(id);
    if (s && s.flags & ts.SymbolFlags.Alias) s = checker.getAliasedSymbol(s);
    const d = s?.declarations?.[0];
    return d ? rel(d.getSourceFile().fileName) : "";
  };
  for (const sf of program.getSourceFiles()) {
    if (!sf.fileName.startsWith(path.join(root, "src"))) continue;
    const file = rel(sf.fileName);
    const visit = (node: ts.Node): void => {
      if (
        ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) &&
        MEMBERS.has(node.expression.name.text)
      ) {
        const type = checker.getTypeAtLocation(node.expression.expression);
        const owner = (type.getSymbol() ?? type.aliasSymbol)?.getName() ?? "";
        uses.push({ file, owner, member: node.expression.name.text });
      }
      if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && NAMES.has(node.expression.text)) {
        calls.push({ file, owner: declaredIn(node.expression), member: node.expression.text });
      }
      if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && NAMES.has(node.expression.text)) {
        constructs.push({ file, owner: declaredIn(node.expression), member: node.expression.text });
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
}

/** Files (other than `self`, the class's own) calling `members` on an `owner`. */
const filesUsing = (owner: string, members: string[], self: string) =>
  [
    ...new Set(
      uses.filter((u) => u.owner === owner && members.includes(u.member) && u.file !== self).map((u) =>
        u.file
      ),
    ),
  ].sort();

/** Each place that serves hosts, and the entry path(s) the e2e test drives through it. */
const ENTRY_POINTS: Record<string, string[]> = {
  "src/mcp/session.ts": ["stdio serve"],
  "src/mcp/inprocess.ts": ["hermit call"],
  "src/service/sessions.ts": ["HTTP service", "relay"],
};

/** Everything a holder of a Gateway can reach. A new public member is a decision: add it here. */
const GATEWAY_SURFACE = [
  "attach",
  "callTool",
  "callToolDetailed",
  "capabilities",
  "catalog",
  "content",
  "listTools",
  "liveUpstreams",
  "lock",
  "logSelfCheck",
  "manifest",
  "onChange",
  "refusals",
  "safeMode",
  "sandbox",
  "selfCheck",
  "setLogLevel",
  "start",
  "stop",
  "upstreamStatus",
  "withheld",
];

describe("the choke point", () => {
  before(collect);

  it("only the gateway creates upstream connections and runs command tools", () => {
    const made = constructs.filter((c) =>
      c.owner === "src/mcp/upstream.ts" && c.member === "UpstreamConnection"
    );
    assert.deepEqual([...new Set(made.map((c) => c.file))], ["src/mcp/gateway.ts"]);
    const ran = calls.filter((c) => c.owner === "src/mcp/command_tool.ts" && c.member === "runCommandTool");
    assert.deepEqual([...new Set(ran.map((c) => c.file))], ["src/mcp/gateway_calls.ts"]);
    const path_ = calls.filter((c) =>
      c.owner === "src/mcp/gateway_calls.ts" && c.member === "callThroughGates"
    );
    assert.deepEqual([...new Set(path_.map((c) => c.file))], ["src/mcp/gateway.ts"]);
  });

  it("only the gateway and its content router use an upstream connection", () => {
    assert.deepEqual(filesUsing("UpstreamConnection", UPSTREAM_MEMBERS, "src/mcp/upstream.ts"), [
      "src/mcp/gateway.ts",
      "src/mcp/gateway_calls.ts",
      "src/mcp/gateway_content.ts",
    ]);
    // and nothing else holds one: the only value importers of upstream.ts are the gateway's modules
    const importers = program.getSourceFiles().filter((sf) => sf.fileName.startsWith(path.join(root, "src")))
      .filter((sf) =>
        sf.statements.some((s) =>
          ts.isImportDeclaration(s) && !s.importClause?.isTypeOnly &&
          path.resolve(path.dirname(sf.fileName), (s.moduleSpecifier as ts.StringLiteral).text) ===
            path.join(root, "src", "mcp", "upstream.ts") &&
          s.importClause?.namedBindings && ts.isNamedImports(s.importClause.namedBindings) &&
          s.importClause.namedBindings.elements.some((e) => !e.isTypeOnly)
        )
      ).map((sf) => rel(sf.fileName)).sort();
    assert.deepEqual(importers, ["src/mcp/gateway.ts"]);
  });

  it("the gateway's upstreams, command tools and upstream owner are private: its surface is a known list", () => {
    const sf = program.getSourceFile(path.join(root, "src", "mcp", "gateway.ts"))!;
    const cls = sf.statements.find((s): s is ts.ClassDeclaration =>
      ts.isClassDeclaration(s) && s.name?.text === "Gateway"
    )!;
    // (never assert on a node itself: assert would print the whole syntax tree)
    const implemented = (cls.heritageClauses ?? []).flatMap((h) =>
      h.types.map((t) => t.expression.getText(sf))
    );
    assert.deepEqual(implemented, [], "the gateway implements no interface that would make more public");
    const isPublic = (m: ts.ClassElement) =>
      m.name !== undefined && !ts.isPrivateIdentifier(m.name) && !ts.isConstructorDeclaration(m) &&
      !ts.getModifiers(m as ts.HasModifiers)?.some((x) =>
        x.kind === ts.SyntaxKind.PrivateKeyword || x.kind === ts.SyntaxKind.ProtectedKeyword
      );
    const surface = cls.members.filter(isPublic).map((m) => (m.name as ts.Identifier).text).sort();
    assert.deepEqual(surface, GATEWAY_SURFACE);
  });

  it("only the session server calls the gateway's tools, resources and prompts", () => {
    assert.deepEqual(filesUsing("Gateway", ["callTool", "callToolDetailed"], "src/mcp/gateway.ts"), [
      "src/mcp/server.ts",
    ]);
    // the gateway itself lists prompts once at start, for the description scan
    assert.deepEqual(filesUsing("ContentRouter", CONTENT_MEMBERS, "src/mcp/gateway_content.ts"), [
      "src/mcp/gateway.ts",
      "src/mcp/server.ts",
    ]);
  });

  it("every creator of a session server is a known entry path", () => {
    const creators = calls.filter((c) =>
      c.owner === "src/mcp/server.ts" && c.member === "createSessionServer"
    );
    assert.deepEqual([...new Set(creators.map((c) => c.file))].sort(), Object.keys(ENTRY_POINTS).sort());
  });

  it("every entry path is driven end to end by tests/e2e/gates.test.ts", () => {
    const e2e = readFileSync(path.join(root, "tests", "e2e", "gates.test.ts"), "utf8");
    for (const entry of Object.values(ENTRY_POINTS).flat()) {
      assert.ok(e2e.includes(`entry: "${entry}"`), `gates.test.ts has no entry path "${entry}"`);
    }
  });

  it("only the session server is an MCP server", () => {
    const servers = constructs.filter((c) => c.member === "Server" || c.member === "McpServer")
      .filter((c) => c.owner.includes("@modelcontextprotocol/sdk"));
    assert.deepEqual([...new Set(servers.map((c) => c.file))], ["src/mcp/server.ts"]);
  });

  it("the gateway applies the gates (behaviour is proven by the e2e tests; this catches a removal)", () => {
    const gateway = (f: string) => f === "src/mcp/gateway.ts" || f === "src/mcp/gateway_calls.ts";
    const inGateway = new Set(calls.filter((c) => gateway(c.file)).map((c) => c.member));
    for (
      const gate of ["screenManifest", "safeMode", "needsApproval", "sanitizeResult", "sanitizeErrorMessage"]
    ) {
      assert.ok(inGateway.has(gate), `src/mcp/gateway.ts no longer calls ${gate}`);
    }
    const sanitized = calls.filter((c) => gateway(c.file) && c.member === "sanitizeResult");
    assert.ok(sanitized.length >= 2, "both the command and the upstream result");
    // gate 9: the catalog leaves out what hermit.lock withholds, and the gateway refuses a call to it
    const text = (f: string) => readFileSync(path.join(root, "src", "mcp", f), "utf8");
    assert.ok(
      text("gateway_catalog.ts").includes("lock.judge("),
      "gateway_catalog.ts no longer asks the lock",
    );
    assert.ok(
      text("gateway_calls.ts").includes("catalog.withheld("),
      "gateway_calls.ts no longer refuses withheld tools",
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
