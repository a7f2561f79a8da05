/**
 * The non-interactive provider driven by the SDK's real `auth()` against a scripted authorization
 * server: refresh with carry-forward, an issuer change, a refused or unavailable refresh (never
 * deleting anything), no client registration from a non-interactive process, a token endpoint
 * that answers nothing usable, and the refresh lock's file. Refreshes of one login at once:
 * refresh_shared.test.ts.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, symlinkSync } from "node:fs";
import path from "node:path";
import { NeedsLogin, RefreshUnavailable } from "../../../src/mcp/oauth/errors.ts";
import { UnsafeAuthorizationServer } from "../../../src/mcp/oauth/discovery.ts";
import { toRecord } from "../../../src/mcp/oauth/store.ts";
import { tryLock } from "../../../src/platform/lock.ts";

import { AS, MCP, setup } from "../../helpers/oauth_provider.ts";

describe("RuntimeOAuthProvider with the SDK's auth()", () => {
  it("refreshes an expired token and keeps the refresh token the response left out", async () => {
    const s = setup();
    try {
      assert.equal(s.provider.tokens()?.expires_in, 0, "expired an hour ago");
      assert.equal(await s.run(), "AUTHORIZED");
      const rec = s.store.readTokens()!;
      assert.equal(rec.access_token, "at-new-1");
      assert.equal(rec.refresh_token, "rt-1");
      assert.equal(rec.issuer, AS);
      assert.equal(s.server.tokenCalls()[0].body?.get("refresh_token"), "rt-1");
      assert.ok(Date.parse(rec.expires_at!) > Date.now() + 50_000);
    } finally {
      s.tmp.cleanup();
    }
  });

  it("needs a login, without registering a client, when there is no stored login", async () => {
    const s = setup({}, false);
    try {
      await assert.rejects(s.run(), (err: Error) => {
        assert.ok(err instanceof NeedsLogin);
        assert.equal(
          err.message,
          "mcp_servers.remote needs a login: run 'hermit login '/work/my adapter' remote'",
        );
        return true;
      });
      assert.ok(
        !s.server.calls.some((c) => c.path === "/register"),
        "no registration from a non-interactive run",
      );
    } finally {
      s.tmp.cleanup();
    }
  });

  it("never presents the refresh token to a different authorization server", async () => {
    const s = setup({ issuer: "https://other-auth.example/" });
    try {
      const before = s.snapshot();
      await assert.rejects(
        s.run(),
        (err: Error) =>
          err instanceof UnsafeAuthorizationServer &&
          err.message.includes(
            `its authorization server is now https://other-auth.example/, but the stored login is from ${AS}; ` +
              "not refreshing, nothing was sent to https://other-auth.example/",
          ),
      );
      assert.equal(s.server.tokenCalls().length, 0);
      assert.deepEqual(s.snapshot(), before);
    } finally {
      s.tmp.cleanup();
    }
  });

  it("a refused refresh token: needs a login, keeps every file, and takes a newer login from disk", async () => {
    const s = setup({ refresh: "invalid_grant" });
    try {
      const before = s.snapshot();
      await assert.rejects(s.run(), (err: Error) => err instanceof NeedsLogin);
      assert.deepEqual(s.snapshot(), before, "nothing deleted or rewritten (Hermes #76590)");
      assert.equal(s.provider.tokens()?.refresh_token, undefined, "the refused token is not offered again");
      // another process (hermit login, or a peer's refresh) writes a new grant
      s.store.writeTokens(
        toRecord(
          { access_token: "at-2", token_type: "bearer", expires_in: 0, refresh_token: "rt-2", issuer: AS },
          { serverUrl: MCP, clientId: "client-1" },
          Date.now(),
        ),
      );
      assert.equal(s.provider.tokens()?.refresh_token, "rt-2");
    } finally {
      s.tmp.cleanup();
    }
  });

  it("a refused client registration: needs a login, says why, keeps every file", async () => {
    const s = setup({ refresh: "invalid_client" });
    try {
      const before = s.snapshot();
      await assert.rejects(
        s.run(),
        (err: Error) => err instanceof NeedsLogin && /no longer accepts its client/.test(err.message),
      );
      assert.deepEqual(s.snapshot(), before);
      assert.ok(!s.server.calls.some((c) => c.path === "/register"));
    } finally {
      s.tmp.cleanup();
    }
  });

  for (const failure of ["503", "down", "html", "no_token"] as const) {
    it(`a refresh that fails for now (${failure}) is reported as such, and the login kept`, async () => {
      const s = setup({ refresh: failure });
      try {
        const before = s.snapshot();
        await assert.rejects(s.run(), (err: Error) => {
          assert.ok(err instanceof RefreshUnavailable, String(err));
          assert.match(err.message, /could not refresh the OAuth access token .*; the stored login is kept/);
          return true;
        });
        assert.deepEqual(s.snapshot(), before);
        assert.equal(s.provider.tokens()?.refresh_token, "rt-1", "still offered next time");
      } finally {
        s.tmp.cleanup();
      }
    });
  }

  it("a token endpoint that never answers fails the refresh for now and lets go of the lock", async () => {
    const s = setup({ refresh: "hang" }, true, 300);
    try {
      const before = s.snapshot();
      await assert.rejects(s.run(), (err: Error) => {
        assert.ok(err instanceof RefreshUnavailable, String(err));
        assert.match(err.message, /did not answer within 0\.3 s/);
        return true;
      });
      const lock = await tryLock(s.store.refreshLockFile());
      assert.ok(lock, "another hermit can refresh this login now");
      lock.release();
      assert.deepEqual(s.snapshot(), before);
    } finally {
      s.tmp.cleanup();
    }
  });

  for (const planted of ["a symlink", "a folder"] as const) {
    it(`a refresh lock that is ${planted} is reported as such, nothing made through it, the login kept`, async () => {
      const s = setup();
      try {
        const before = s.snapshot();
        const outside = path.join(s.tmp.path, "outside");
        const lockFile = s.store.refreshLockFile();
        if (planted === "a symlink") symlinkSync(outside, lockFile);
        else mkdirSync(lockFile);
        await assert.rejects(s.run(), (err: Error) => {
          assert.ok(err instanceof RefreshUnavailable, String(err));
          assert.ok(err.message.includes(`cannot open the refresh lock ${lockFile}`), err.message);
          return true;
        });
        assert.ok(!existsSync(outside), "no file made where the symlink points");
        assert.deepEqual(s.snapshot(), before);
        assert.equal(s.server.tokenCalls().length, 0);
      } finally {
        s.tmp.cleanup();
      }
    });
  }
});
