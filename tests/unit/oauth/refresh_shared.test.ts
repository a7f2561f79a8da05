/**
 * Refreshes of one stored login: concurrent ones in a process merged into one request, and across
 * processes (each session's hermit) one at a time under the login's lock, a process that waited
 * taking what the other stored, and a login stored meanwhile never replaced by a refresh; a
 * login `hermit logout` removed before or during a refresh is not made again, and needs a login.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { auth } from "@modelcontextprotocol/sdk/client/auth.js";
import { NeedsLogin } from "../../../src/mcp/oauth/errors.ts";
import { RuntimeOAuthProvider } from "../../../src/mcp/oauth/runtime_provider.ts";
import { OAuthStore, toRecord } from "../../../src/mcp/oauth/store.ts";
import { AS, MCP, setup } from "../../helpers/oauth_provider.ts";

describe("refreshes of one login", () => {
  it("merges concurrent refreshes with the same refresh token into one request", async () => {
    const s = setup({ refresh: "rotate", delayMs: 50 });
    try {
      const results = await Promise.all([s.run(), s.run(), s.run()]);
      assert.deepEqual(results, ["AUTHORIZED", "AUTHORIZED", "AUTHORIZED"]);
      assert.equal(s.server.tokenCalls().length, 1, "a rotating server would see reuse otherwise");
      assert.equal(s.store.readTokens()?.refresh_token, "rt-new-1");
    } finally {
      s.tmp.cleanup();
    }
  });

  it("a refresh leaves no note of its holder behind (refresh.pid names a refresh under way)", async () => {
    const s = setup({ refresh: "rotate" });
    try {
      assert.equal(await s.run(), "AUTHORIZED");
      assert.equal(s.server.tokenCalls().length, 1);
      assert.equal(
        existsSync(path.join(s.store.dir, "refresh.pid")),
        false,
        readdirSync(s.store.dir).join(", "),
      );
    } finally {
      s.tmp.cleanup();
    }
  });

  it("another process on the same login waits for its refresh and takes what it stored", async () => {
    const s = setup({ refresh: "rotate", delayMs: 200 });
    try {
      // a second hermit: its own store reader, provider and guard on the same files
      const other = new RuntimeOAuthProvider({
        store: new OAuthStore(s.tmp.path, "notes", "remote"),
        serverUrl: MCP,
        oauth: {},
        server: "remote",
        adapterDir: "/work/my adapter",
        fetch: s.server.fetchFn,
      });
      const theirs = auth(other, { serverUrl: MCP, fetchFn: other.guard.fetch });
      const results = await Promise.all([s.run(), theirs]);
      assert.deepEqual(results, ["AUTHORIZED", "AUTHORIZED"]);
      const sent = s.server.tokenCalls().map((c) => c.body?.get("refresh_token"));
      assert.deepEqual(
        sent,
        ["rt-1"],
        "rt-1 presented once: a rotating server would revoke the grant at the second",
      );
      assert.equal(s.store.readTokens()?.refresh_token, "rt-new-1");
      assert.equal(other.tokens()?.access_token, "at-new-1");
      assert.equal(s.provider.tokens()?.access_token, "at-new-1");
    } finally {
      s.tmp.cleanup();
    }
  });

  it("a login stored while a refresh is on its way is kept, not replaced by the refresh's answer", async () => {
    const s = setup({ refresh: "rotate", delayMs: 200 });
    try {
      const running = s.run();
      await new Promise((r) => setTimeout(r, 50));
      const login = toRecord(
        {
          access_token: "at-login",
          token_type: "bearer",
          expires_in: 60,
          refresh_token: "rt-login",
          issuer: AS,
        },
        { serverUrl: MCP, clientId: "client-1" },
        Date.now(),
      );
      s.store.writeTokens(login);
      assert.equal(await running, "AUTHORIZED");
      assert.equal(s.server.tokenCalls().length, 1);
      assert.equal(s.store.readTokens()?.access_token, "at-login", "the login is what is stored");
      assert.equal(s.store.readTokens()?.refresh_token, "rt-login");
    } finally {
      s.tmp.cleanup();
    }
  });

  it("a refresh after another process's login uses that login, not the refresh token it read", async () => {
    const s = setup({ refresh: "rotate" });
    try {
      const readBefore = s.provider.tokens()!;
      // another process logs in afresh between this one reading the tokens and refreshing
      s.store.writeTokens(
        toRecord(
          {
            access_token: "at-login",
            token_type: "bearer",
            expires_in: 60,
            refresh_token: "rt-login",
            issuer: AS,
          },
          { serverUrl: MCP, clientId: "client-1" },
          Date.now(),
        ),
      );
      const body = new URLSearchParams({
        grant_type: "refresh_token",
        refresh_token: readBefore.refresh_token!,
      });
      const res = await s.provider.guard.fetch(new URL("/token", AS), { method: "POST", body });
      assert.equal(res.status, 200);
      assert.equal((await res.json()).access_token, "at-login");
      assert.equal(s.server.tokenCalls().length, 0, "the old refresh token was not presented");
      assert.equal(s.store.readTokens()?.refresh_token, "rt-login");
    } finally {
      s.tmp.cleanup();
    }
  });

  it("a login hermit logout removed before the refresh takes its lock: nothing of it made again", async () => {
    const s = setup();
    try {
      const readBefore = s.provider.tokens()!; // read before the logout, as the SDK does
      assert.ok(s.store.remove());
      const body = new URLSearchParams({
        grant_type: "refresh_token",
        refresh_token: readBefore.refresh_token!,
      });
      await assert.rejects(s.provider.guard.fetch(new URL("/token", AS), { method: "POST", body }));
      assert.ok(!existsSync(s.store.dir), "no empty login directory left behind");
      assert.equal(
        s.provider.guard.transientFailure,
        undefined,
        "not a failure that may pass: needs a login",
      );
      assert.equal(s.server.tokenCalls().length, 0);
    } finally {
      s.tmp.cleanup();
    }
  });

  it("a login hermit logout removes while its refresh is on its way: the answer is not used, needs a login", async () => {
    const s = setup({ delayMs: 200 });
    try {
      const running = s.run();
      await new Promise((r) => setTimeout(r, 50));
      assert.ok(s.store.remove());
      await assert.rejects(running, (err: Error) => {
        assert.ok(err instanceof NeedsLogin, String(err));
        return true;
      });
      assert.equal(s.server.tokenCalls().length, 1);
      assert.ok(!existsSync(s.store.dir), "nothing of the login made again");
    } finally {
      s.tmp.cleanup();
    }
  });
});
