/**
 * The service's token never goes in cleartext to another host: a relay (`hermit serve DIR
 * --serve-url URL` with `--token-file` or `HERMIT_SERVE_TOKEN`) and `deploy --serve-url` refuse a
 * plain `http://` URL off loopback in one line, exit 2, before anything is sent or written; and
 * `check` reports a `serve.command` that would do it. `hermit stop` asks the service on loopback
 * directly, never through `HTTP_PROXY`. The other host is a listener on this machine's own
 * non-loopback address (tests/helpers/other_host.ts), which records what arrives.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { runHermit } from "../helpers/hermit.ts";
import { type OtherHost, startOtherHost } from "../helpers/other_host.ts";
import { Reaper } from "../helpers/procs.ts";
import { startService } from "../helpers/service.ts";
import { tempDir } from "../helpers/tmp.ts";

const TOKEN = "t".repeat(32);
const CLEARTEXT =
  /^error: --serve-url http:\/\/\S+\/mcp is plain http to another host, so (this relay|hosts) would send the token across the network in cleartext; use https:\/\/ [^\n]*\n$/;

describe("--serve-url on plain http to another host", () => {
  const tmp = tempDir("hermit-relay-cleartext-");
  const dir = path.join(tmp.path, "adapter");
  const tokenFile = path.join(tmp.path, "token");
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== "HERMIT_SERVE_TOKEN"));
  let other: OtherHost;

  before(async () => {
    other = await startOtherHost();
    mkdirSync(dir);
    writeFileSync(
      path.join(dir, "hermit.yaml"),
      "name: relayed\nexports: { tools: [hi] }\ntools:\n  hi: { description: hi, run: [echo, hi] }\n",
    );
    writeFileSync(tokenFile, TOKEN + "\n");
  });

  after(async () => {
    await other.close();
    tmp.cleanup();
  });

  it("a relay with a token refuses at once and sends nothing (twice: the app, then the fast path)", async () => {
    const url = `${other.base}/mcp`;
    for (
      const [args, extra] of [
        [["--token-file", tokenFile], {}],
        [[], { HERMIT_SERVE_TOKEN: TOKEN }],
        [["--token-file", tokenFile], {}],
      ] as const
    ) {
      const r = await runHermit(["serve", dir, "--serve-url", url, ...args], {
        env: { ...env, ...extra },
        input: "",
        timeoutMs: 20_000,
      });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, CLEARTEXT);
      assert.match(r.stderr, /so this relay would send/);
    }
    assert.deepEqual(other.seen, []);
  });

  it("deploy refuses to write it into hosts; check reports it in serve.command", async () => {
    const project = path.join(tmp.path, "project");
    mkdirSync(project);
    const d = await runHermit(
      ["deploy", dir, project, "--host", "claude", "--serve-url", `${other.base}/mcp`],
      { env: { ...env, HOME: tmp.path } },
    );
    assert.equal(d.code, 2, d.stdout + d.stderr);
    assert.match(d.stderr, CLEARTEXT);
    assert.match(d.stderr, /so hosts would send/);
    assert.ok(!existsSync(path.join(project, ".mcp.json")));

    const relaying = path.join(tmp.path, "relaying");
    mkdirSync(relaying);
    writeFileSync(
      path.join(relaying, "hermit.yaml"),
      "name: relaying\nexports: { tools: [hi] }\ntools:\n  hi: { description: hi, run: [echo, hi] }\n" +
        `serve: { command: "hermit serve . --serve-url ${other.base}/mcp --token-file /run/secrets/t" }\n`,
    );
    const c = await runHermit(["check", relaying, "--static"], { env });
    assert.notEqual(c.code, 0, c.stdout);
    assert.match(
      c.stdout,
      /passes --serve-url http:\/\/\S+\/mcp, plain http to another host, so every host session started with it would send the token across the network in cleartext/,
    );
    assert.deepEqual(other.seen, []);
  });
});

describe("hermit stop with a proxy set", () => {
  const tmp = tempDir("hermit-stop-proxy-");
  const reaper = new Reaper();
  let proxy: OtherHost;
  before(async () => {
    proxy = await startOtherHost();
  });
  after(async () => {
    await reaper.reap();
    await proxy.close();
    tmp.cleanup();
  });

  it("asks the service on loopback directly: its token never goes to HTTP_PROXY", async () => {
    writeFileSync(
      path.join(tmp.path, "hermit.yaml"),
      "name: stopped\nexports: { tools: [hi] }\ntools:\n  hi: { description: hi, run: [echo, hi] }\n",
    );
    const svc = await startService(tmp.path, {}, { reaper });
    const env = {
      ...process.env,
      HTTP_PROXY: proxy.base,
      http_proxy: proxy.base,
      NO_PROXY: "",
      no_proxy: "",
    };
    const r = await runHermit(["stop", tmp.path], { env, timeoutMs: 30_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(proxy.seen.filter((a) => a.authorization?.includes(svc.token)), []);
    assert.deepEqual(proxy.seen, []);
  });
});
