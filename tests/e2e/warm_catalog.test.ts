/**
 * The relay's warm answers are the service's answers: for adapters with one and with two upstream
 * servers, resources and prompts on and off, `initialize` (protocol version, capabilities, server
 * info) and `tools/list` built from the schema cache the service wrote equal, to the byte, what
 * the running service (the compiled binary) answers over HTTP. Two servers where one offers
 * resource subscriptions and the other resources without them is the case the catalog drifted on.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { loadManifest } from "../../src/manifest/load.ts";
import { defaultSchemaCache } from "../../src/mcp/schema_cache.ts";
import { warmAnswers } from "../../src/relay/warm.ts";
import { fixtures, root, testHome } from "../helpers/hermit.ts";
import { Reaper } from "../helpers/procs.ts";
import { startService } from "../helpers/service.ts";
import { initializeRequest } from "../helpers/relay_host.ts";
import { tempDir } from "../helpers/tmp.ts";

const everything = path.join(
  root,
  "node_modules",
  "@modelcontextprotocol",
  "server-everything",
  "dist",
  "index.js",
);
const scripted = path.join(fixtures, "servers", "scripted.mjs");

function adapter(dir: string, servers: 1 | 2, content: boolean): void {
  const flags = `resources: ${content}, prompts: ${content}`;
  writeFileSync(
    path.join(dir, "hermit.yaml"),
    `name: warm-${servers}-${content}
exports: { tools: [echo, get-sum${servers === 2 ? ", note" : ""}] }
tools:
  get-sum-local: { description: not exported, run: [echo] }
mcp_servers:
  everything:
    command: node
    args: [${JSON.stringify(everything)}]
    tools: { include: [echo, get-sum], ${flags} }
${
      servers === 2
        ? `  scripted:
    command: node
    args: [${JSON.stringify(scripted)}]
    env: { TOOLS: note, RESOURCES: "1", PROMPTS: "1" }
    tools: { ${flags} }
`
        : ""
    }serve:
  lifecycle: standalone
  host_launch: false
  instructions: SERVICE.md
`,
  );
  writeFileSync(path.join(dir, "SERVICE.md"), "hermit serve . --standalone\n");
}

/** One JSON-RPC exchange with the service over HTTP; the answer's `result`, and the session id. */
async function rpc(
  url: string,
  token: string,
  body: Record<string, unknown>,
  session?: string,
): Promise<{ result: unknown; session?: string }> {
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${token}`,
      ...(session ? { "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" } : {}),
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  const json = (res.headers.get("content-type") ?? "").includes("text/event-stream")
    ? text.split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6)))
      .find((m) => m.id === body.id)
    : JSON.parse(text);
  return { result: json.result, session: res.headers.get("mcp-session-id") ?? undefined };
}

const wire = (v: unknown) => JSON.parse(JSON.stringify(v));

describe("warm answers equal the service's", () => {
  const reaper = new Reaper();
  const dirs: { cleanup(): void }[] = [];
  after(async () => {
    await reaper.reap();
    for (const d of dirs) d.cleanup();
  });

  for (const servers of [1, 2] as const) {
    for (const content of [true, false]) {
      it(`${servers} server${servers === 2 ? "s" : ""}, resources and prompts ${content ? "on" : "off"}`, async () => {
        const tmp = tempDir();
        dirs.push(tmp);
        adapter(tmp.path, servers, content);
        const svc = await startService(tmp.path, {}, { reaper });
        try {
          const init = await rpc(svc.url, svc.token, initializeRequest());
          const list = await rpc(
            svc.url,
            svc.token,
            { jsonrpc: "2.0", id: 2, method: "tools/list" },
            init.session,
          );

          const m = loadManifest(tmp.path);
          const cache = defaultSchemaCache(m.dir, process.platform, { HERMIT_HOME: testHome() });
          const warm = warmAnswers(m, (u) => cache.get(u), {});
          // as the host receives them: JSON on the wire
          assert.deepEqual(wire(warm.initialize("2025-06-18")), init.result);
          assert.deepEqual(wire(warm.toolsList()), list.result);
          if (servers === 2 && content) {
            const caps = (init.result as { capabilities: { resources?: unknown } }).capabilities;
            assert.deepEqual(caps.resources, { listChanged: true, subscribe: true }, "one server subscribes");
          }
        } finally {
          await svc.stop();
        }
      });
    }
  }
});
