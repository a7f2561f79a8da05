/**
 * Refreshes of one OAuth login that other hermit processes are doing, end to end from the compiled
 * binary against tests/fixtures/oauth/server.mjs (its refreshes delayed): a `hermit call` that
 * stops waiting first says whose refresh it waits for (not "still starting"), and one that waits
 * uses the tokens the other stored; `hermit logout` during a refresh leaves nothing of the login,
 * and every hermit on it then says it needs a login.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { hermitBin, runHermit } from "../helpers/hermit.ts";
import { control as controlOf, type Fixture, login, startFixture } from "../helpers/oauth_fixture.ts";
import { collect, Reaper, sleep, waitFor } from "../helpers/procs.ts";
import { tempDir } from "../helpers/tmp.ts";

describe("OAuth: a login other hermits are refreshing", { skip: process.platform === "win32" }, () => {
  const tmp = tempDir("hermit-oauth-refresh-");
  const reaper = new Reaper();
  const home = path.join(tmp.path, "home");
  const dir = path.join(tmp.path, "adapter");
  const oauthDir = path.join(home, "oauth", "oauth-refresh", "remote");
  const tokensFile = path.join(oauthDir, "tokens.json");
  const LINE = `mcp_servers.remote needs a login: run 'hermit login ${dir} remote'`;
  let fx: Fixture;
  let env: Record<string, string>;

  const control = (body?: Record<string, unknown>) => controlOf(fx, body);
  const call = (more: Record<string, string> = {}) =>
    runHermit(["call", dir, "whoami"], { env: { ...env, ...more }, timeoutMs: 60_000 });
  /** A `hermit call` in the background: its pid, and its result when it ends. */
  const callInBackground = () => {
    const child = spawn(hermitBin(), ["call", dir, "whoami"], { env, stdio: "pipe" });
    reaper.track(child.pid);
    return { pid: child.pid!, done: collect(child, undefined, 60_000, "hermit call") };
  };
  /** Wait for the stored access token to run out, then for `n` refreshes to reach the server. */
  const expired = async () => {
    const at = Date.parse(JSON.parse(readFileSync(tokensFile, "utf8")).expires_at);
    await waitFor(() => Date.now() > at + 1000, { timeoutMs: 15_000, what: "the access token to expire" });
    return Number((await control()).refresh_requests);
  };
  const refreshArrived = (before: number) =>
    waitFor(async () => Number((await control()).refresh_requests) > before, {
      timeoutMs: 30_000,
      what: "a refresh to reach the authorization server",
    });

  before(async () => {
    fx = await startFixture(reaper);
    env = { ...(process.env as Record<string, string>), HERMIT_HOME: home, HERMIT_STARTUP_WAIT: "40" };
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      path.join(dir, "hermit.yaml"),
      `name: oauth-refresh\nexports: { tools: [whoami] }\nmcp_servers:\n` +
        `  remote: { url: '${fx.mcp}', auth: oauth }\nserve: { command: hermit serve . }\n`,
    );
  });

  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  it("logs in", async () => {
    const r = await login(dir, env, reaper, "browser");
    assert.equal(r.code, 0, r.stderr);
  });

  it("a call that stops waiting first names the other hermit's refresh; one that waits uses its tokens", async () => {
    await control({ refresh_delay_ms: 8000 });
    let holder: ReturnType<typeof callInBackground> | undefined;
    try {
      const seen = await expired();
      holder = callInBackground();
      await refreshArrived(seen);
      const impatient = await call({ HERMIT_STARTUP_WAIT: "2" });
      assert.equal(impatient.code, 1, impatient.stderr);
      assert.ok(
        impatient.stderr.includes(
          `mcp_servers.remote is waiting for another hermit (pid ${holder.pid}) to finish refreshing its OAuth login`,
        ),
        impatient.stderr,
      );
      assert.doesNotMatch(impatient.stderr, /still starting/);
      const patient = await call();
      const first = await holder.done;
      holder = undefined;
      assert.equal(first.code, 0, first.stderr);
      assert.equal(patient.code, 0, patient.stderr);
      const token = JSON.parse(readFileSync(tokensFile, "utf8")).access_token;
      assert.ok(patient.stdout.includes(`token=${token}`), "the tokens the other hermit stored");
      assert.equal(Number((await control()).refresh_requests), seen + 1, "one refresh for all three");
    } finally {
      await holder?.done.catch(() => {}); // the next test starts from a settled login
      await control({ refresh_delay_ms: 0 });
    }
  });

  it("hermit logout during a refresh: nothing of the login remains, and the hermits on it need a login", async () => {
    await control({ refresh_delay_ms: 5000 });
    try {
      const seen = await expired();
      const holder = callInBackground();
      await refreshArrived(seen);
      const waiter = callInBackground();
      await sleep(2000); // by now it waits for the holder's refresh (and passes if it had not got that far)
      const out = await runHermit(["logout", dir, "remote"], { env, timeoutMs: 30_000 });
      assert.equal(out.code, 0, out.stderr);
      for (const r of [await holder.done, await waiter.done]) {
        assert.equal(r.code, 1, r.stderr);
        assert.ok(r.stderr.includes(LINE), r.stderr);
      }
      assert.ok(!existsSync(oauthDir), "no login directory made again");
    } finally {
      await control({ refresh_delay_ms: 0 });
    }
  });
});
