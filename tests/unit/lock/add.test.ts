/**
 * `hermit add`'s splice, over manifest text: the catalog entry goes in as a new `mcp_servers`
 * entry and its tools at the end of `exports.tools` (flow or block list), every other byte and
 * comment stays; the sandbox policy is spliced in the manifest's `sandbox:` shape (checked here as
 * YAML, since the schema takes the key only once the sandbox is merged); names in the way and
 * unknown tools are usage errors that change nothing.
 */
import assert from "node:assert/strict";
import path from "node:path";
import { describe, it } from "node:test";
import { parse } from "yaml";
import { findEntry, planAdd } from "../../../src/catalog/add.ts";
import { HermitError } from "../../../src/errors.ts";
import { appendYamlSeq } from "../../../src/hosts/edit/yaml.ts";

const FILE = path.resolve("/adapters/a/hermit.yaml");
const DIR = path.dirname(FILE);
const MANIFEST = `# my adapter
name: a
exports:
  tools: [hello]   # the contract
tools:
  hello:
    description: Says hello   # a command tool
    run: [echo, hi]
`;

describe("hermit add's splice", () => {
  it("adds the entry and its tools, keeping every other byte and comment", () => {
    const plan = planAdd(MANIFEST, FILE, DIR, findEntry("memory"), {}, false);
    assert.ok(plan.text.startsWith("# my adapter\nname: a\nexports:\n  tools: [hello, create_entities, "));
    assert.ok(
      plan.text.includes(
        "open_nodes]   # the contract\ntools:\n  hello:\n    description: Says hello   # a command tool\n",
      ),
    );
    const m = plan.loaded!.manifest;
    assert.deepEqual(m.upstreams.memory.args, ["-y", "@modelcontextprotocol/server-memory@2026.8.31"]);
    assert.equal(m.upstreams.memory.env.MEMORY_FILE_PATH, "${workspaceFolder}/.memory.jsonl");
    assert.equal(m.upstreams.memory.trust, "full");
    assert.deepEqual(m.exports.tools.slice(0, 2), ["hello", "create_entities"]);
  });

  it("splices the sandbox policy in the manifest's shape, {root} filled in", () => {
    const plan = planAdd(MANIFEST, FILE, DIR, findEntry("filesystem"), {
      root: "/data",
      tools: ["read_text_file"],
    }, true);
    const entry = parse(plan.text).mcp_servers.filesystem;
    assert.deepEqual(entry.sandbox, {
      read: ["/data"],
      write: ["/data", "${userHome}/.npm"],
      network: "none",
    });
    assert.deepEqual(entry.args, ["-y", "@modelcontextprotocol/server-filesystem@2026.8.31", "/data"]);
    assert.deepEqual(entry.tools, { include: ["read_text_file"] });
    assert.equal(entry.trust, "untrusted");
    const pw = parse(planAdd(MANIFEST, FILE, DIR, findEntry("notion"), {}, true).text).mcp_servers.notion;
    assert.deepEqual(pw.sandbox, { write: ["${userHome}/.npm"], network: ["api.notion.com:443"] });
    assert.deepEqual(pw.env, { NOTION_TOKEN: "${env:NOTION_TOKEN}" }, "a placeholder, never a value");
  });

  it("--as, --prefix and --trust go where the manifest takes them", () => {
    const plan = planAdd(MANIFEST, FILE, DIR, findEntry("memory"), {
      as: "kg",
      prefix: "kg_",
      trust: "untrusted",
      tools: ["read_graph"],
    }, false);
    const m = plan.loaded!.manifest;
    assert.deepEqual(m.exports.tools, ["hello", "kg_read_graph"]);
    assert.equal(m.upstreams.kg.prefix, "kg_");
    assert.equal(m.upstreams.kg.trust, "untrusted");
  });

  it("refuses a server name or tool names in the way, and tools the entry does not have", () => {
    const once = planAdd(MANIFEST, FILE, DIR, findEntry("memory"), {}, false).text;
    const err = (f: () => unknown, re: RegExp) =>
      assert.throws(f, (e: unknown) => e instanceof HermitError && e.exitCode === 2 && re.test(e.message));
    err(
      () => planAdd(once, FILE, DIR, findEntry("memory"), {}, false),
      /already has mcp_servers\.memory; .* --as/,
    );
    err(
      () => planAdd(once, FILE, DIR, findEntry("memory"), { as: "kg" }, false),
      /exports\.tools already lists 'create_entities'.*--prefix/,
    );
    err(
      () => planAdd(MANIFEST, FILE, DIR, findEntry("memory"), { tools: ["nope"] }, false),
      /memory has no tool 'nope'; it offers: create_entities/,
    );
    err(() => findEntry("memroy"), /no catalog entry 'memroy' \(did you mean 'memory'\?\)/);
    // one line about the flag, not an error per exported name at positions not in the file
    err(
      () => planAdd(MANIFEST, FILE, DIR, findEntry("memory"), { prefix: "x;y" }, false),
      /^--prefix must be letters, digits, - and _ \(tool names allow no other\), got 'x;y'$/,
    );
    err(
      () => planAdd(MANIFEST, FILE, DIR, findEntry("memory"), { prefix: "p".repeat(60) }, false),
      /^--prefix makes 'p+create_entities' longer than the 64 characters a tool name may have$/,
    );
  });
});

describe("appending to a YAML list in place", () => {
  const add = (text: string) => appendYamlSeq(text, ["exports", "tools"], ["x", "y-z"]);
  it("into a flow list before its ], after a trailing comma, into []", () => {
    assert.equal(
      add("exports:\n  tools: [a, b]   # c\n  context: X\n"),
      "exports:\n  tools: [a, b, x, y-z]   # c\n  context: X\n",
    );
    assert.equal(add("exports:\n  tools: [a, b,]\n"), "exports:\n  tools: [a, b, x, y-z]\n");
    assert.equal(add("exports:\n  tools: []\n"), "exports:\n  tools: [x, y-z]\n");
  });
  it("under a block list, indented like its items, comments kept", () => {
    assert.equal(
      add('exports:\n  tools:\n    - a   # first\n    - "-b"\n  # after\n  context: X\n'),
      'exports:\n  tools:\n    - a   # first\n    - "-b"\n    - x\n    - y-z\n  # after\n  context: X\n',
    );
  });
  it("creates the list when it is missing", () => {
    assert.deepEqual(parse(add("exports:\n  context: X\n")), {
      exports: { context: "X", tools: ["x", "y-z"] },
    });
  });
});
