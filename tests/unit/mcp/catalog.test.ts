/**
 * `src/mcp/catalog.ts`, the catalog's rules as pure functions (the gateway and the relay's warm
 * answers both use them): which sources run, the tools in `exports.tools` order with a name
 * provided twice served by neither, upstream definitions sanitized, a withheld tool no source,
 * and capabilities each only when some running upstream backs them (subscriptions when any does).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { parseManifest } from "../../../src/manifest/load.ts";
import {
  activeSources,
  buildCatalog,
  capabilitiesOf,
  type ListedUpstream,
} from "../../../src/mcp/catalog.ts";
import { mapTools, MAX_DEFINITION_DEPTH, nestsDeeper } from "../../../src/mcp/upstream_tools.ts";

const m = parseManifest(
  `name: cat
exports: { tools: [b, a, twice, gone] }
tools:
  a: { description: a command tool, run: [echo], read_only: true }
  twice: { description: also upstream, run: [echo] }
  off: { description: refused, run: [echo] }
mcp_servers:
  one: { command: node, args: [one.js] }
  two: { command: node, args: [two.js], tools: { resources: false, prompts: false } }
  disabled: { command: node, args: [x.js], enabled: false }
`,
  "/a/hermit.yaml",
  "/a",
).manifest;

const tool = (name: string, extra: Partial<Tool> = {}): Tool => ({
  name,
  description: `the ${name} tool`,
  inputSchema: { type: "object" },
  ...extra,
});

function listed(): ListedUpstream[] {
  const [one, two] = activeSources(m, [], false).upstreams;
  return [
    {
      config: one,
      tools: mapTools([tool("b", { description: "b\u{E0041} hidden" }), tool("twice")], one),
      capabilities: { resources: { subscribe: true }, logging: {} },
    },
    { config: two, tools: mapTools([tool("gone")], two), capabilities: { resources: {}, prompts: {} } },
  ];
}

describe("the catalog's rules", () => {
  it("active sources: none in safe mode; no disabled upstream; nothing screening refused", () => {
    assert.deepEqual(activeSources(m, [], true), { upstreams: [], commandTools: [] });
    const active = activeSources(m, ["tools.off", "mcp_servers.two"], false);
    assert.deepEqual(active.upstreams.map((u) => u.name), ["one"]);
    assert.deepEqual(active.commandTools.map((t) => t.name), ["a", "twice"]);
  });

  it("exports order; a name from two sources served by neither; definitions sanitized; withheld is no source", () => {
    const commandTools = activeSources(m, ["tools.off"], false).commandTools;
    const { entries, collisions } = buildCatalog({
      exports: m.exports.tools,
      commandTools,
      upstreams: listed(),
    });
    assert.deepEqual(entries.map((e) => [e.name, e.source.kind]), [["b", "upstream"], ["a", "command"], [
      "gone",
      "upstream",
    ]]);
    assert.deepEqual(collisions.map((c) => [c.name, c.sources.length]), [["twice", 2]]);
    assert.equal(entries[0].tool.description, "b hidden", "TAG character stripped");
    assert.equal(entries[1].readOnly, true);
    const withheld = buildCatalog({
      exports: m.exports.tools,
      commandTools,
      upstreams: listed(),
      withhold: (server, t) => server === "two" && t.raw === "gone",
    });
    assert.deepEqual(withheld.entries.map((e) => e.name), ["b", "a"]);
  });

  it("capabilities: subscriptions when any upstream offers them; resources and prompts only where the manifest lets them", () => {
    assert.deepEqual(capabilitiesOf(m, listed()), {
      tools: { listChanged: true },
      resources: { listChanged: true, subscribe: true },
      logging: {},
    });
    assert.deepEqual(capabilitiesOf({ exports: { tools: [] } }, []), {});
  });

  it("a tool nested deeper than the gates can walk is left out; the limit counts objects and arrays", () => {
    const nested = (n: number) => {
      let v: Record<string, unknown> = { type: "string" };
      for (let i = 0; i < n; i++) v = { items: v };
      return v;
    };
    const [one] = activeSources(m, [], false).upstreams;
    // nested(n) is n + 1 levels; the tool, its schema and `properties` are three more
    const at = (n: number) => tool("b", { inputSchema: { type: "object", properties: { x: nested(n) } } });
    assert.deepEqual(mapTools([at(MAX_DEFINITION_DEPTH - 4), tool("twice")], one).map((t) => t.raw), [
      "b",
      "twice",
    ]);
    assert.deepEqual(mapTools([at(MAX_DEFINITION_DEPTH - 3), tool("twice")], one).map((t) => t.raw), [
      "twice",
    ]);
    assert.deepEqual(mapTools([at(200_000), tool("twice")], one).map((t) => t.raw), ["twice"]);
    assert.equal(nestsDeeper(nested(2), 3), false);
    assert.equal(nestsDeeper(nested(3), 3), true);
    assert.equal(nestsDeeper([[[]]], 3), false);
    assert.equal(nestsDeeper([[[[]]]], 3), true);
    assert.equal(nestsDeeper("text", 0), false);
  });
});
