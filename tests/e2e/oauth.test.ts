/**
 * OAuth 2.1 end to end, from the compiled binary, against tests/fixtures/oauth/server.mjs (an
 * authorization server and a protected MCP server on loopback; access tokens live 3 s). Without a
 * login every path says so in one line, at once; `hermit login` (the test plays the browser)
 * stores tokens 0600 in a 0700 directory; calls survive the token's expiry by refreshing (the
 * refresh token kept) and failed, cancelled, mixed-up or timed-out re-logins (the stored login
 * byte-identical); a running `hermit serve` picks a login up. Also paste-back, SSE, logout.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { runHermit } from "../helpers/hermit.ts";
import { connectServe, type HermitSession, textOf } from "../helpers/mcp.ts";
import { control as controlOf, type Fixture, login, startFixture } from "../helpers/oauth_fixture.ts";
import { Reaper, waitFor } from "../helpers/procs.ts";
import { tempDir } from "../helpers/tmp.ts";

const mode = (p: string) => statSync(p).mode & 0o777;

describe("OAuth upstreams: login, refresh, failed re-login", { skip: process.platform === "win32" }, () => {
  const tmp = tempDir("hermit-oauth-");
  const reaper = new Reaper();
  const home = path.join(tmp.path, "home");
  const dir = path.join(tmp.path, "adapter");
  const oauthDir = path.join(home, "oauth", "oauth-demo", "remote");
  const tokensFile = path.join(oauthDir, "tokens.json");
  const clientFile = path.join(oauthDir, "client.json");
  const LINE = `mcp_servers.remote needs a login: run 'hermit login ${dir} remote'`;
  let fx: Fixture;
  let env: Record<string, string>;
  let session: HermitSession | undefined;

  const control = (body?: Record<string, unknown>) => controlOf(fx, body);
  const call = () => runHermit(["call", dir, "whoami"], { env, timeoutMs: 30_000 });
  const tokens = () => JSON.parse(readFileSync(tokensFile, "utf8"));

  before(async () => {
    fx = await startFixture(reaper);
    // a hang would take 100 s (startup wait and connect timeout); every run below allows 30 s
    env = { ...(process.env as Record<string, string>), HERMIT_HOME: home, HERMIT_STARTUP_WAIT: "100" };
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      path.join(dir, "hermit.yaml"),
      `name: oauth-demo\nexports: { tools: [whoami] }\nmcp_servers:\n` +
        `  remote: { url: '${fx.mcp}', auth: oauth, connect_timeout: 100 }\n` +
        `  plain: { url: '${fx.mcp}', enabled: false }\nserve: { command: hermit serve . }\n`,
    );
  });

  after(async () => {
    await session?.close();
    await reaper.reap();
    tmp.cleanup();
  });

  it("without a login, call and check say so in one line, at once", async () => {
    const r = await call();
    assert.notEqual(r.code, 0);
    assert.ok(r.stderr.includes(LINE), r.stderr);
    const c = await runHermit(["check", dir], { env, timeoutMs: 30_000 });
    assert.equal(c.code, 3, c.stdout + c.stderr);
    assert.ok((c.stdout + c.stderr).includes(LINE), c.stdout + c.stderr);
  });

  it("a running serve session reports the line and serves nothing from that server yet", async () => {
    session = await connectServe(dir, { env, timeoutMs: 30_000 });
    await waitFor(() => session!.stderr().includes(LINE), {
      timeoutMs: 10_000,
      what: "the line from serve",
    });
    const { tools } = await session.client.listTools();
    assert.deepEqual(tools.map((t) => t.name), []);
  });

  it("usage errors: an unknown server and one without auth: oauth exit 2", async () => {
    const unknown = await runHermit(["login", dir, "nosuch"], { env, timeoutMs: 30_000 });
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /has no mcp_servers\.nosuch; its servers: remote, plain/);
    const plain = await runHermit(["login", dir, "plain"], { env, timeoutMs: 30_000 });
    assert.equal(plain.code, 2);
    assert.match(plain.stderr, /does not use OAuth/);
  });

  it("hermit login through the loopback callback stores tokens 0600 in a 0700 directory", async () => {
    const r = await login(dir, env, reaper, "browser");
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^logged in to mcp_servers\.remote \(1 tool\); credentials in /);
    for (const d of [path.join(home, "oauth"), path.dirname(oauthDir), oauthDir]) {
      assert.equal(
        mode(d),
        0o700,
        d,
      );
    }
    assert.equal(mode(tokensFile), 0o600);
    assert.equal(mode(clientFile), 0o600);
    const t = tokens();
    assert.equal(t.server_url, fx.mcp);
    assert.equal(t.issuer, fx.issuer);
    assert.ok(t.refresh_token && t.access_token && t.expires_at);
    const stats = await control();
    assert.equal(stats.registrations, 1, "registered once (RFC 7591)");
    assert.equal(stats.exchanges, 1);
  });

  it("the running serve session picks the login up by itself", async () => {
    await waitFor(async () => (await session!.client.listTools()).tools.some((t) => t.name === "whoami"), {
      timeoutMs: 20_000,
      what: "whoami to appear in the open session",
    });
    const res = await session!.client.callTool({ name: "whoami", arguments: {} });
    assert.match(textOf(res), /^client=\S+ token=at-/);
    await session!.close();
    session = undefined;
  });

  it("hermit call works, and keeps working past the access token's expiry (refreshed)", async () => {
    const first = await call();
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /^client=\S+ token=at-/);
    const before = tokens();
    await waitFor(() => Date.now() > Date.parse(before.expires_at) + 1000, {
      timeoutMs: 15_000,
      what: "the access token to expire",
    });
    const refreshesBefore = Number((await control()).refreshes);
    const second = await call();
    assert.equal(second.code, 0, second.stderr);
    const after = tokens();
    assert.ok(Number((await control()).refreshes) > refreshesBefore, "a refresh happened");
    assert.notEqual(after.access_token, before.access_token, "a new access token was stored");
    assert.equal(
      after.refresh_token,
      before.refresh_token,
      "the refresh token was kept (the response had none)",
    );
    assert.ok(Date.parse(after.expires_at) > Date.parse(before.expires_at));
    assert.ok(second.stdout.includes(`token=${after.access_token}`), "the call used the refreshed token");
    assert.equal(mode(tokensFile), 0o600, "still 0600 after the refresh wrote it");
  });

  it("with a rotating authorization server, the rotated refresh token is stored and used", async () => {
    await control({ refresh: "rotate" });
    const before = tokens();
    await waitFor(() => Date.now() > Date.parse(before.expires_at) + 1000, {
      timeoutMs: 15_000,
      what: "the access token to expire",
    });
    const r = await call();
    assert.equal(r.code, 0, r.stderr);
    assert.notEqual(tokens().refresh_token, before.refresh_token);
    await control({ refresh: "omit" });
  });

  it("two hermits refreshing one login at once: one refresh, and a server that revokes on reuse keeps the grant", async () => {
    // the server rotates, and takes a rotated-away refresh token presented again for a stolen one
    await control({ refresh: "rotate", refresh_delay_ms: 1500 });
    try {
      const before = tokens();
      await waitFor(() => Date.now() > Date.parse(before.expires_at) + 1000, {
        timeoutMs: 15_000,
        what: "the access token to expire",
      });
      const counts = await control();
      const [a, b] = await Promise.all([call(), call()]);
      assert.equal(a.code, 0, a.stderr);
      assert.equal(b.code, 0, b.stderr);
      const now = await control();
      assert.equal(now.reused, counts.reused, "no refresh token was presented twice");
      assert.equal(Number(now.refreshes) - Number(counts.refreshes), 1, "one refresh for both");
      assert.notEqual(tokens().refresh_token, before.refresh_token);
      const again = await call();
      assert.equal(again.code, 0, again.stderr);
    } finally {
      await control({ refresh: "omit", refresh_delay_ms: 0 });
    }
  });

  const answers = {
    deny: "browser",
    token: "browser",
    cancel: "cancel",
    iss: "mix-up",
    timeout: "none",
  } as const;
  for (const failure of Object.keys(answers) as (keyof typeof answers)[]) {
    it(`a failed re-login (${failure}) exits 1 and leaves the stored login byte-identical and working`, async () => {
      const beforeTokens = readFileSync(tokensFile);
      const beforeClient = readFileSync(clientFile);
      if (failure !== "cancel") await control({ fail_next: failure });
      const r = await login(dir, env, reaper, answers[failure]);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /the stored login is unchanged/);
      if (failure === "deny") assert.match(r.stderr, /refused: access_denied/);
      if (failure === "token") assert.match(r.stderr, /exchanging the authorization code failed/);
      if (failure === "timeout") assert.match(r.stderr, /no answer within 1 s/);
      assert.ok(readFileSync(tokensFile).equals(beforeTokens), "tokens.json untouched");
      assert.ok(readFileSync(clientFile).equals(beforeClient), "client.json untouched");
      const c = await call();
      assert.equal(c.code, 0, c.stderr);
      assert.match(c.stdout, /^client=\S+ token=at-/);
    });
  }

  it("a login by pasting the address the browser ended on replaces the tokens", async () => {
    const before = tokens();
    const r = await login(dir, env, reaper, "paste");
    assert.equal(r.code, 0, r.stderr);
    assert.notEqual(tokens().access_token, before.access_token);
    assert.notEqual(tokens().refresh_token, before.refresh_token, "a new grant");
    const c = await call();
    assert.equal(c.code, 0, c.stderr);
  });

  it("a legacy SSE upstream: needs a login, logs in, calls", async () => {
    const sseDir = path.join(tmp.path, "sse-adapter");
    mkdirSync(sseDir);
    writeFileSync(
      path.join(sseDir, "hermit.yaml"),
      "name: sse-demo\nexports: { tools: [whoami] }\nmcp_servers:\n" +
        `  legacy: { url: '${fx.sse}', transport: sse, auth: oauth }\nserve: { command: hermit serve . }\n`,
    );
    const sseCall = () => runHermit(["call", sseDir, "whoami"], { env, timeoutMs: 30_000 });
    const before = await sseCall();
    assert.notEqual(before.code, 0);
    assert.ok(
      before.stderr.includes(`mcp_servers.legacy needs a login: run 'hermit login ${sseDir} legacy'`),
    );
    const r = await login(sseDir, env, reaper, "browser", "legacy");
    assert.equal(r.code, 0, r.stderr);
    const c = await sseCall();
    assert.equal(c.code, 0, c.stderr);
    assert.match(c.stdout, /^client=\S+ token=at-/);
  });

  it("hermit logout forgets the login; calls need a login again", async () => {
    const out = await runHermit(["logout", dir, "remote"], { env, timeoutMs: 30_000 });
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /^logged out of mcp_servers\.remote; removed /);
    assert.throws(() => statSync(oauthDir));
    const again = await runHermit(["logout", dir, "remote"], { env, timeoutMs: 30_000 });
    assert.equal(again.code, 0);
    assert.match(again.stdout, /had no stored login/);
    const r = await call();
    assert.notEqual(r.code, 0);
    assert.ok(r.stderr.includes(LINE), r.stderr);
  });
});

describe("OAuth: an authorization server without dynamic registration", {
  skip: process.platform === "win32",
}, () => {
  const tmp = tempDir("hermit-oauth-");
  const reaper = new Reaper();
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  it("login says to register hermit by hand (decided from the server's metadata, not an error's words)", async () => {
    const fx = await startFixture(reaper, ["--no-registration"]);
    const dir = path.join(tmp.path, "adapter");
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      path.join(dir, "hermit.yaml"),
      `name: oauth-demo\nexports: { tools: [whoami] }\nmcp_servers:\n  remote: { url: '${fx.mcp}', auth: oauth }\n`,
    );
    const env = { ...(process.env as Record<string, string>), HERMIT_HOME: path.join(tmp.path, "home") };
    const r = await runHermit(["login", dir, "remote", "--timeout", "5"], { env, timeoutMs: 60_000 });
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      /could not start the login: .*; register hermit with it yourself and set oauth\.client_id/,
    );
  });
});
