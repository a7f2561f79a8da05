/**
 * Credentials never go in cleartext to another host: a remote upstream on plain `http://` off
 * loopback with `auth: oauth` or `headers:` is refused by `check` and by `serve` (in one line
 * naming the manifest, the field and the fix; the rest of the adapter still serves), while one
 * with nothing secret to send is contacted as before. The "other host" is this machine's own
 * non-loopback address where it has one (then the server sees what would have crossed the network).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { runHermit } from "../helpers/hermit.ts";
import { connectServe, textOf } from "../helpers/mcp.ts";
import { waitFor } from "../helpers/procs.ts";
import { tempDir } from "../helpers/tmp.ts";

/** This machine's first non-loopback IPv4 address, else a documentation address (never answered). */
function otherHost(): string {
  const ours = Object.values(os.networkInterfaces()).flat().find((a) =>
    a && !a.internal && a.family === "IPv4"
  );
  return ours?.address ?? "192.0.2.1";
}

const TOKEN = "s3cret-token-never-in-cleartext";

describe("remote upstreams on plain http off loopback", () => {
  const tmp = tempDir("hermit-cleartext-");
  const seen: { path: string; authorization?: string }[] = [];
  let server: Server;
  let base: string;

  before(async () => {
    server = createServer((req: IncomingMessage, res) => {
      seen.push({ path: req.url ?? "", authorization: req.headers.authorization });
      req.resume();
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, "0.0.0.0", r));
    base = `http://${otherHost()}:${(server.address() as AddressInfo).port}`;
    writeFileSync(
      path.join(tmp.path, "hermit.yaml"),
      `name: cleartext
exports: { tools: [hello] }
tools:
  hello: { description: Says hello, run: [echo, hi] }
mcp_servers:
  keyed:
    url: ${base}/keyed
    headers: { Authorization: "Bearer \${env:LEAK_TOKEN}" }
    connect_timeout: 5
  oauthed: { url: "${base}/oauthed", auth: oauth, connect_timeout: 5 }
  plain: { url: "${base}/plain", connect_timeout: 5 }
`,
    );
  });

  after(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    tmp.cleanup();
  });

  const file = () => path.join(tmp.path, "hermit.yaml");
  const refusal = (name: string, what: string) =>
    new RegExp(
      `refused: mcp_servers\\.${name}\\.url in ${file().replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: ` +
        `http://[^ ]+/${name} is plain http to another host, so ${what} would cross the network in ` +
        `cleartext; use https://`,
    );

  it("check refuses the entries that would send credentials, in one line each, and not the plain one", async () => {
    const r = await runHermit(["check", tmp.path, "--static"], {
      env: { ...process.env, LEAK_TOKEN: TOKEN },
    });
    assert.equal(r.code, 4, r.stdout + r.stderr);
    assert.match(r.stdout, refusal("keyed", "headers \\(Authorization\\)"));
    assert.match(r.stdout, refusal("oauthed", "its OAuth access token"));
    assert.doesNotMatch(r.stdout, /mcp_servers\.plain\.url/);
    assert.doesNotMatch(r.stdout + r.stderr, /\n\s+at /); // no stack trace
  });

  it("login refuses at once and sends nothing", async () => {
    const before = seen.length;
    const r = await runHermit(["login", tmp.path, "oauthed", "--timeout", "20"], {
      input: "q\n",
      timeoutMs: 30_000,
    });
    assert.equal(r.code, 4, r.stdout + r.stderr);
    assert.match(r.stderr, refusal("oauthed", "its OAuth access token"));
    assert.deepEqual(seen.slice(before), []);
  });

  it("serve refuses them before sending anything, says why, and serves the rest", async () => {
    const s = await connectServe(tmp.path, { env: { LEAK_TOKEN: TOKEN, HERMIT_STARTUP_WAIT: "100" } });
    try {
      const hello = await s.client.callTool({ name: "hello", arguments: {} });
      assert.equal(textOf(hello).trim(), "hi");
      await waitFor(
        () =>
          refusal("keyed", "headers \\(Authorization\\)").test(s.stderr()) &&
          refusal("oauthed", "its OAuth access token").test(s.stderr()),
        {
          timeoutMs: 30_000,
          what: () => `both refusals on stderr (stderr: ${s.stderr()})`,
        },
      );
      if (otherHost() !== "192.0.2.1") {
        // the plain one is contacted: the others would have been by now
        await waitFor(() => seen.some((r) => r.path === "/plain"), {
          timeoutMs: 30_000,
          what: "a request to /plain",
        });
        assert.deepEqual(seen.filter((r) => r.path !== "/plain"), []);
      }
      assert.ok(!seen.some((r) => r.authorization?.includes(TOKEN)), JSON.stringify(seen));
    } finally {
      await s.close();
    }
  });
});
