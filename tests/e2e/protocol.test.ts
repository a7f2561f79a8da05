/**
 * Protocol negotiation with upstreams, from the compiled binary: servers on the previous two
 * protocol revisions work; a server that speaks none hermit speaks is reported clearly; over HTTP
 * the negotiated version is sent in `MCP-Protocol-Version` after `initialize` (not on it).
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fixtures, runHermit } from "../helpers/hermit.ts";
import { connectServe, textOf } from "../helpers/mcp.ts";
import { Reaper, waitFor } from "../helpers/procs.ts";
import { tempDir } from "../helpers/tmp.ts";

const scripted = path.join(fixtures, "servers", "scripted.mjs");

function stdioAdapter(dir: string, version: string): void {
  writeFileSync(
    path.join(dir, "hermit.yaml"),
    `name: proto
exports: { tools: [echo] }
mcp_servers:
  s: { command: node, args: [${JSON.stringify(scripted)}], env: { PROTOCOL_VERSION: "${version}" } }
`,
  );
}

describe("protocol negotiation", () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  for (const version of ["2025-06-18", "2025-03-26"]) {
    it(`works with a server on ${version}`, async () => {
      stdioAdapter(tmp.path, version);
      const s = await connectServe(tmp.path);
      reaper.track(s.pid);
      assert.match(textOf(await s.client.callTool({ name: "echo", arguments: { text: "v" } })), /^echo: v/);
      await s.close();
    });
  }

  it("reports clearly when a server speaks no version hermit does", async () => {
    stdioAdapter(tmp.path, "2099-01-01");
    const r = await runHermit(["tools", tmp.path, "--json"]);
    const report = JSON.parse(r.stdout);
    assert.equal(report.missing[0].name, "echo");
    assert.match(
      report.missing[0].why,
      /speaks MCP protocol version 2099-01-01; hermit speaks 2025-11-25, 2025-06-18/,
    );
  });

  it("over HTTP, sends the negotiated version after initialize, and not on it", async () => {
    const portFile = path.join(tmp.path, "port");
    const headers = path.join(tmp.path, "headers.log");
    const server = spawn("node", [scripted], {
      env: {
        ...process.env,
        HTTP_PORT: "0",
        PORT_FILE: portFile,
        HEADER_LOG: headers,
        PROTOCOL_VERSION: "2025-06-18",
      },
      stdio: "ignore",
    });
    reaper.track(server.pid);
    const port = await waitFor(() => {
      try {
        return Number(readFileSync(portFile, "utf8")) || undefined;
      } catch {
        return undefined;
      }
    }, { timeoutMs: 10_000, what: "the HTTP fixture to listen" });
    writeFileSync(
      path.join(tmp.path, "hermit.yaml"),
      `name: proto\nexports: { tools: [echo] }\nmcp_servers:\n  s: { url: "http://127.0.0.1:${port}/mcp" }\n`,
    );
    const s = await connectServe(tmp.path);
    reaper.track(s.pid);
    assert.match(textOf(await s.client.callTool({ name: "echo", arguments: { text: "h" } })), /^echo: h/);
    await s.close();
    const posts = readFileSync(headers, "utf8").trim().split("\n").filter((l) => l.startsWith("POST"));
    assert.equal(posts[0], "POST -", "initialize carries no version header");
    assert.ok(posts.length >= 3, posts.join("; "));
    assert.ok(posts.slice(1).every((l) => l === "POST 2025-06-18"), posts.join("; "));
  });
});
