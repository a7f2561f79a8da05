/**
 * Credentials never go in cleartext to another host: a remote upstream on plain `http://` off
 * loopback with `auth: oauth` or `headers:` is refused by `check` and by `serve` (in one line
 * naming the manifest, the field and the fix; the rest of the adapter still serves), while one
 * with nothing secret to send is contacted as before. The "other host" is this machine's own
 * non-loopback address where it has one (then the server sees what would have crossed the network).
 * And a server that redirects to another origin does not pass its headers on (the MCP SDK follows
 * redirects only within an origin; the runtime's fetch would take every header but Authorization).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import process from "node:process";
import { runHermit } from "../helpers/hermit.ts";
import { connectServe, textOf } from "../helpers/mcp.ts";
import { type OtherHost, startOtherHost } from "../helpers/other_host.ts";
import { waitFor } from "../helpers/procs.ts";
import { tempDir } from "../helpers/tmp.ts";

const TOKEN = "s3cret-token-never-in-cleartext";

describe("remote upstreams on plain http off loopback", () => {
  const tmp = tempDir("hermit-cleartext-");
  let other: OtherHost;

  before(async () => {
    other = await startOtherHost();
    const base = other.base;
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
    await other.close();
    tmp.cleanup();
  });

  const file = () => path.join(tmp.path, "hermit.yaml");
  const refusal = (name: string, what: string) =>
    new RegExp(
      `refused: mcp_servers\\.${name}: its url http://[^ ]+/${name} \\(${
        file().replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
      }\\) is plain http to another host, so ${what} would cross the network in ` +
        `cleartext; use https://`,
    );

  it("check refuses the entries that would send credentials, in one line each, and not the plain one", async () => {
    const r = await runHermit(["check", tmp.path, "--static"], {
      env: { ...process.env, LEAK_TOKEN: TOKEN },
    });
    assert.equal(r.code, 4, r.stdout + r.stderr);
    assert.match(r.stdout, refusal("keyed", "headers \\(Authorization\\)"));
    assert.match(r.stdout, refusal("oauthed", "its OAuth access token"));
    assert.doesNotMatch(r.stdout, /mcp_servers\.plain:/);
    assert.doesNotMatch(r.stdout + r.stderr, /\n\s+at /); // no stack trace
  });

  it("tools lists them as refused, exit 4", async () => {
    const r = await runHermit(["tools", tmp.path], { env: { ...process.env, LEAK_TOKEN: TOKEN } });
    assert.equal(r.code, 4, r.stdout + r.stderr);
    assert.match(r.stdout, refusal("keyed", "headers \\(Authorization\\)"));
    assert.match(r.stdout, refusal("oauthed", "its OAuth access token"));
    assert.match(r.stdout, /^hello +command/m);
  });

  it("login refuses at once and sends nothing", async () => {
    const before = other.seen.length;
    const r = await runHermit(["login", tmp.path, "oauthed", "--timeout", "20"], {
      input: "q\n",
      timeoutMs: 30_000,
    });
    assert.equal(r.code, 4, r.stdout + r.stderr);
    assert.match(r.stderr, refusal("oauthed", "its OAuth access token"));
    assert.deepEqual(other.seen.slice(before), []);
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
      if (other.reachable) {
        // the plain one is contacted: the others would have been by now
        await waitFor(() => other.seen.some((r) => r.path === "/plain"), {
          timeoutMs: 30_000,
          what: "a request to /plain",
        });
        assert.deepEqual(other.seen.filter((r) => r.path !== "/plain"), []);
      }
      assert.ok(!other.seen.some((r) => r.authorization?.includes(TOKEN)), JSON.stringify(other.seen));
    } finally {
      await s.close();
    }
  });
});

describe("a redirect to another origin", { skip: process.platform !== "linux" }, () => {
  // all of 127.0.0.0/8 is this machine on Linux: 127.0.0.2 is another origin without a network
  const tmp = tempDir("hermit-redirect-");
  const arrived: { key?: string; authorization?: string }[] = [];
  let target: Server;
  let redirector: Server;

  before(async () => {
    target = createServer((req, res) => {
      arrived.push({ key: req.headers["x-api-key"] as string, authorization: req.headers.authorization });
      req.resume();
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => target.listen(0, "127.0.0.2", r));
    const to = `http://127.0.0.2:${(target.address() as AddressInfo).port}/mcp`;
    redirector = createServer((req, res) => (req.resume(), res.writeHead(307, { location: to }).end()));
    await new Promise<void>((r) => redirector.listen(0, "127.0.0.1", r));
    const from = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}/mcp`;
    writeFileSync(
      path.join(tmp.path, "hermit.yaml"),
      `name: redirected\nexports: { tools: [hello] }\ntools:\n  hello: { description: hi, run: [echo, hi] }\n` +
        `mcp_servers:\n  moved: { url: "${from}", headers: { X-API-Key: "${TOKEN}" }, connect_timeout: 5 }\n`,
    );
  });

  after(async () => {
    await Promise.all([target, redirector].map((s) => new Promise<void>((r) => s.close(() => r()))));
    tmp.cleanup();
  });

  it("is not followed: the server's headers reach nothing but that server", async () => {
    const r = await runHermit(["tools", tmp.path], { timeoutMs: 60_000 });
    assert.match(r.stdout, /^hello +command/m);
    assert.deepEqual(arrived, []);
  });
});

describe("a loopback server with HTTP_PROXY set", () => {
  const tmp = tempDir("hermit-proxy-");
  const atServer: (string | undefined)[] = [];
  const atProxy: string[] = [];
  let server: Server;
  let proxy: Server;

  before(async () => {
    server = createServer((
      req,
      res,
    ) => (atServer.push(req.headers["x-api-key"] as string), req.resume(), res.writeHead(404).end()));
    proxy = createServer((
      req,
      res,
    ) => (atProxy.push(`${req.method} ${req.url}`), req.resume(), res.writeHead(502).end()));
    await Promise.all([server, proxy].map((s) => new Promise<void>((r) => s.listen(0, "127.0.0.1", r))));
    writeFileSync(
      path.join(tmp.path, "hermit.yaml"),
      `name: proxied\nexports: { tools: [hello] }\ntools:\n  hello: { description: hi, run: [echo, hi] }\n` +
        `mcp_servers:\n  local: { url: "http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp", ` +
        `headers: { X-API-Key: "${TOKEN}" }, connect_timeout: 5 }\n`,
    );
  });

  after(async () => {
    await Promise.all([server, proxy].map((s) => new Promise<void>((r) => s.close(() => r()))));
    tmp.cleanup();
  });

  it("reaches it directly: the proxy, which cannot reach this loopback, gets nothing", async () => {
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !/^(no|https?|all)_proxy$/i.test(k)),
    );
    const r = await runHermit(["tools", tmp.path], {
      env: { ...env, HTTP_PROXY: proxyUrl, http_proxy: proxyUrl, NO_PROXY: "corp.example" },
      timeoutMs: 60_000,
    });
    assert.match(r.stdout, /^hello +command/m);
    assert.deepEqual(atProxy, []);
    assert.ok(atServer.includes(TOKEN), JSON.stringify(atServer));
  });
});
