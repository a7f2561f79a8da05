/**
 * Resource reads go to the one server that owns the URI (issue 12 item 20): when the owner fails,
 * its error is the answer and no other server — an untrusted one included — is asked; a URI that
 * a server's template matches goes to it; an unknown URI with several servers is an error; a URI
 * two servers list is served by neither (an untrusted server listing another's URI took its reads).
 * Real SDK servers in process, behind the real gateway.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { parseManifest } from "../../../src/manifest/load.ts";
import { Gateway } from "../../../src/mcp/gateway.ts";
import { FakeClock } from "../../helpers/fake_clock.ts";

const manifest = parseManifest(
  "name: res\nexports: { tools: [] }\nmcp_servers:\n  owner: { command: unused }\n  other: { command: unused, trust: untrusted }\n",
  "/x/hermit.yaml",
  "/x",
).manifest;

function resourceServer(name: string, uris: string[], templates: string[], reads: string[]) {
  const [client, server] = InMemoryTransport.createLinkedPair();
  const s = new Server({ name, version: "1" }, { capabilities: { resources: {} } });
  s.setRequestHandler(
    ListResourcesRequestSchema,
    () => ({ resources: uris.map((uri) => ({ uri, name: uri })) }),
  );
  s.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: templates.map((uriTemplate) => ({ uriTemplate, name: uriTemplate })),
  }));
  s.setRequestHandler(ReadResourceRequestSchema, (req) => {
    reads.push(`${name} ${req.params.uri}`);
    if (req.params.uri.includes("broken")) {
      throw new McpError(ErrorCode.InternalError, `cannot read ${req.params.uri}`);
    }
    return { contents: [{ uri: req.params.uri, text: `${name} has it` }] };
  });
  void s.connect(server);
  return client;
}

async function gatewayWith(reads: string[], otherLists = ["b://x"]): Promise<Gateway> {
  const g = new Gateway(manifest, {
    clock: new FakeClock(),
    schemaCache: null,
    transportFactory: (u) =>
      u.name === "owner"
        ? resourceServer("owner", ["a://broken", "a://fine"], ["a://items/{id}"], reads)
        : resourceServer("other", otherLists, ["b://{id}"], reads),
  });
  await g.start();
  return g;
}

describe("resources/read goes to the owner only", () => {
  it("a failing owner's error is the answer; the untrusted server is never asked", async () => {
    const reads: string[] = [];
    const g = await gatewayWith(reads);
    try {
      await g.content.listResources();
      await assert.rejects(g.content.readResource("a://broken"), /cannot read a:\/\/broken/);
      assert.deepEqual(reads, ["owner a://broken"]);
      assert.deepEqual((await g.content.readResource("b://x")).contents, [{
        uri: "b://x",
        text: "other has it",
      }]);
    } finally {
      await g.stop();
    }
  });

  it("unlisted URIs: found by the owner's template, even before any listing; else an error", async () => {
    const reads: string[] = [];
    const g = await gatewayWith(reads);
    try {
      const r = await g.content.readResource("a://items/42");
      assert.deepEqual(r.contents, [{ uri: "a://items/42", text: "owner has it" }]);
      assert.deepEqual(reads, ["owner a://items/42"]);
      await assert.rejects(
        g.content.readResource("z://nowhere"),
        /unknown resource z:\/\/nowhere: no server lists it/,
      );
      assert.deepEqual(reads, ["owner a://items/42"], "no server was asked");
    } finally {
      await g.stop();
    }
  });

  it("a URI two servers list is served by neither: the later lister cannot take the owner's reads", async () => {
    const reads: string[] = [];
    const g = await gatewayWith(reads, ["b://x", "a://fine"]);
    try {
      const { resources } = await g.content.listResources();
      assert.deepEqual(resources.map((r) => r.uri), ["a://broken", "b://x"]);
      await assert.rejects(
        g.content.readResource("a://fine"),
        /resource a:\/\/fine is listed by mcp_servers\.owner and mcp_servers\.other: served by neither/,
      );
      assert.deepEqual(reads, [], "no server was asked");
    } finally {
      await g.stop();
    }
  });
});
