/**
 * An OAuth login is bound to its authorization server: two fixtures (tests/fixtures/oauth/
 * server.mjs), and the first one's MCP server then names the second's authorization server in its
 * protected-resource metadata (a moved, compromised or hostile server). `hermit login` and a
 * refresh refuse in one line naming both issuers, and the second server receives nothing: no
 * registration, no authorization, no code, no refresh token. `oauth.issuer` binds a first login.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { runHermit } from "../helpers/hermit.ts";
import {
  control,
  type Fixture,
  login as loginAnswered,
  loginPlaying,
  startFixture,
} from "../helpers/oauth_fixture.ts";
import { Reaper, waitFor } from "../helpers/procs.ts";
import { tempDir } from "../helpers/tmp.ts";

describe(
  "OAuth: a login is bound to its authorization server",
  { skip: process.platform === "win32" },
  () => {
    const tmp = tempDir("hermit-oauth-issuer-");
    const reaper = new Reaper();
    const home = path.join(tmp.path, "home");
    let a: Fixture;
    let b: Fixture;
    let env: Record<string, string>;

    /** Run `hermit login`; should it print an authorization URL, approve there (as a browser would). */
    const login = (dir: string) =>
      loginPlaying(dir, env, reaper, async (url, _redirect, answer) => {
        const res = await fetch(url, { redirect: "manual" });
        await res.body?.cancel();
        const location = res.headers.get("location");
        if (location) await fetch(location).then((r) => r.text()).catch(() => {});
        answer("q\n");
      });

    function adapter(name: string, oauth = ""): string {
      const dir = path.join(tmp.path, name);
      mkdirSync(dir, { recursive: true });
      writeFileSync(
        path.join(dir, "hermit.yaml"),
        `name: ${name}\nexports: { tools: [whoami] }\nmcp_servers:\n` +
          `  remote: { url: '${a.mcp}', auth: oauth, connect_timeout: 100${oauth} }\n`,
      );
      return dir;
    }

    const untouched = async (before: Record<string, unknown>) => {
      const now = await control(b);
      for (const k of ["registrations", "authorizations", "exchanges", "refresh_requests"]) {
        assert.equal(now[k], before[k], `${b.issuer} received nothing (${k})`);
      }
    };

    before(async () => {
      [a, b] = await Promise.all([startFixture(reaper), startFixture(reaper)]);
      env = { ...(process.env as Record<string, string>), HERMIT_HOME: home, HERMIT_STARTUP_WAIT: "100" };
    });

    after(async () => {
      await reaper.reap();
      tmp.cleanup();
    });

    it("after a login, another issuer is refused for a new login and for a refresh", async () => {
      const dir = adapter("bound");
      const first = await loginAnswered(dir, env, reaper, "browser");
      assert.equal(first.code, 0, first.stderr);
      const tokensFile = path.join(home, "oauth", "bound", "remote", "tokens.json");
      const stored = readFileSync(tokensFile);
      await control(a, { authorization_server: b.issuer });
      try {
        const before = await control(b);
        const r = await login(dir);
        assert.equal(r.code, 1, r.stderr);
        const line =
          `mcp_servers.remote: its authorization server is now ${b.issuer}, but the stored login is ` +
          `from ${a.issuer}; not logging in, nothing was sent to ${b.issuer} (if it really moved: run ` +
          `'hermit logout ${dir} remote', then 'hermit login ${dir} remote')`;
        assert.equal(r.stderr.trim(), `error: ${line}`);
        await waitFor(() => Date.now() > Date.parse(JSON.parse(String(stored)).expires_at) + 1000, {
          timeoutMs: 15_000,
          what: "the access token to expire",
        });
        const call = await runHermit(["call", dir, "whoami"], { env, timeoutMs: 30_000 });
        assert.notEqual(call.code, 0);
        assert.equal(
          call.stderr.trim(),
          `error: whoami is not available: mcp_servers.remote could not be started: ${
            line.slice("mcp_servers.remote: ".length).replace("not logging in", "not refreshing")
          }`,
        );
        await untouched(before);
        assert.ok(readFileSync(tokensFile).equals(stored), "the stored login is kept");
      } finally {
        await control(a, { authorization_server: null });
      }
      const ok = await runHermit(["call", dir, "whoami"], { env, timeoutMs: 30_000 });
      assert.equal(ok.code, 0, ok.stderr);
    });

    it("oauth.issuer binds the first login", async () => {
      const dir = adapter("named", `, oauth: { issuer: '${a.issuer}' }`);
      await control(a, { authorization_server: b.issuer });
      try {
        const before = await control(b);
        const r = await login(dir);
        assert.equal(r.code, 1, r.stderr);
        assert.ok(
          r.stderr.includes(
            `its authorization server is now ${b.issuer}, but oauth.issuer names ${a.issuer}; not logging in, ` +
              `nothing was sent to ${b.issuer} (if it really moved: set oauth.issuer to ${b.issuer})`,
          ),
          r.stderr,
        );
        await untouched(before);
      } finally {
        await control(a, { authorization_server: null });
      }
      const ok = await loginAnswered(dir, env, reaper, "browser");
      assert.equal(ok.code, 0, ok.stderr);
    });
  },
);
