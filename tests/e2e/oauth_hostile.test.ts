/**
 * `hermit login` and `hermit call` from the compiled binary against a hostile or careless
 * authorization server and a hostile neighbour (tests/fixtures/oauth/server.mjs with its
 * `metadata` and `no_iss` switches): forged callback answers without `state` do not abort a
 * login, metadata naming another issuer is refused before anything is sent (and no refresh token
 * goes to it later), and an answer without the `iss` its server promised is not used.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { runHermit } from "../helpers/hermit.ts";
import {
  control as controlOf,
  type Fixture,
  loginPlaying,
  type Play,
  startFixture,
} from "../helpers/oauth_fixture.ts";
import { Reaper, waitFor } from "../helpers/procs.ts";
import { tempDir } from "../helpers/tmp.ts";

/** The authorization server's redirect for `url` (a browser that approves at once). */
async function approve(url: string): Promise<string> {
  const res = await fetch(url, { redirect: "manual" });
  await res.body?.cancel();
  assert.equal(res.status, 302);
  return res.headers.get("location")!;
}

async function get(url: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url);
  return { status: res.status, text: await res.text() };
}

describe(
  "OAuth against hostile answers and authorization servers",
  { skip: process.platform === "win32" },
  () => {
    const tmp = tempDir("hermit-oauth-hostile-");
    const reaper = new Reaper();
    const home = path.join(tmp.path, "home");
    const dir = path.join(tmp.path, "adapter");
    const tokensFile = path.join(home, "oauth", "oauth-hostile", "remote", "tokens.json");
    let fx: Fixture;
    let env: Record<string, string>;
    const control = (body?: Record<string, unknown>) => controlOf(fx, body);

    const login = (play: Play) => loginPlaying(dir, env, reaper, play);

    before(async () => {
      fx = await startFixture(reaper);
      env = { ...(process.env as Record<string, string>), HERMIT_HOME: home, HERMIT_STARTUP_WAIT: "100" };
      mkdirSync(dir, { recursive: true });
      writeFileSync(
        path.join(dir, "hermit.yaml"),
        `name: oauth-hostile\nexports: { tools: [whoami] }\nmcp_servers:\n` +
          `  remote: { url: '${fx.mcp}', auth: oauth, connect_timeout: 100 }\n`,
      );
    });

    after(async () => {
      await reaper.reap();
      tmp.cleanup();
    });

    it("callback answers without state are refused (400) and the browser's answer still logs in", async () => {
      const r = await login(async (url, redirect) => {
        for (const forged of ["?error=access_denied", "?code=anything"]) {
          const page = await get(redirect + forged);
          assert.equal(page.status, 400, `${forged} is not used`);
          assert.match(page.text, /carries no state/);
        }
        const page = await get(await approve(url));
        assert.equal(page.status, 200, "the browser's answer is taken");
      });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^logged in to mcp_servers\.remote/);
    });

    it("metadata naming another issuer: login refuses before sending anything, and its iss is not trusted", async () => {
      await control({ metadata: { issuer: "http://127.0.0.1:9/" }, fail_next: "iss" });
      try {
        const before = await control();
        const r = await login(async (url) => void await get(await approve(url)));
        assert.equal(r.code, 1, r.stderr);
        assert.ok(
          r.stderr.includes(
            `mcp_servers.remote: the authorization server at ${fx.issuer} says its issuer is http://127.0.0.1:9/ ` +
              "(RFC 8414 requires them to match); not logging in",
          ),
          r.stderr,
        );
        assert.equal(r.stderr.trim().split("\n").length, 1, "one line");
        const now = await control();
        assert.equal(now.authorizations, before.authorizations);
        assert.equal(now.exchanges, before.exchanges);
      } finally {
        await control({ metadata: null, fail_next: null });
      }
    });

    it("metadata naming another issuer: no refresh token is presented to it", async () => {
      const stored = readFileSync(tokensFile);
      await waitFor(() => Date.now() > Date.parse(JSON.parse(String(stored)).expires_at) + 1000, {
        timeoutMs: 15_000,
        what: "the access token to expire",
      });
      await control({ metadata: { issuer: "http://127.0.0.1:9/" } });
      try {
        const before = await control();
        const r = await runHermit(["call", dir, "whoami"], { env, timeoutMs: 30_000 });
        assert.notEqual(r.code, 0);
        assert.match(
          r.stderr,
          /says its issuer is http:\/\/127\.0\.0\.1:9\/ \(RFC 8414 requires them to match\)/,
        );
        assert.equal((await control()).refresh_requests, before.refresh_requests);
        assert.ok(readFileSync(tokensFile).equals(stored), "the stored login is kept");
      } finally {
        await control({ metadata: null });
      }
      const ok = await runHermit(["call", dir, "whoami"], { env, timeoutMs: 30_000 });
      assert.equal(ok.code, 0, ok.stderr);
    });

    it("an answer without the iss its authorization server promises is not used", async () => {
      await control({
        metadata: { authorization_response_iss_parameter_supported: true },
        fail_next: "no_iss",
      });
      try {
        const r = await login(async (url, _redirect, answer) => {
          const location = await approve(url);
          assert.ok(!new URL(location).searchParams.has("iss"));
          const page = await get(location);
          assert.equal(page.status, 400, "not used");
          assert.match(page.text, /does not name its authorization server \(iss\)/);
          answer("q\n");
        });
        assert.equal(r.code, 1, r.stderr);
        assert.match(r.stderr, /login cancelled; the stored login is unchanged/);
      } finally {
        await control({ metadata: null, fail_next: null });
      }
    });
  },
);
