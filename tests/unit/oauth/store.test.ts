/**
 * OAuth storage: file layout and modes, where the store lives (as the given environment says),
 * the absolute `expires_at`, the refresh-token carry-forward (Hermes #62333/#109932) and what a
 * record may be used for. Atomic replacement itself: tests/unit/platform/atomic_write.test.ts.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, existsSync, readdirSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import {
  expiresAtMs,
  fromRecord,
  OAuthStore,
  type TokenRecord,
  toRecord,
} from "../../../src/mcp/oauth/store.ts";
import { tempDir } from "../../helpers/tmp.ts";

const T0 = Date.UTC(2026, 0, 1);
const URL_A = "https://mcp.example/mcp";
const ISSUER = "https://auth.example/";
const binding = { serverUrl: URL_A, clientId: "client-1" };
const tokens = (extra: Record<string, unknown> = {}) => ({
  access_token: "at-1",
  token_type: "bearer",
  expires_in: 3600,
  refresh_token: "rt-1",
  issuer: ISSUER,
  ...extra,
});
const mode = (p: string) => statSync(p).mode & 0o777;
const posix = process.platform !== "win32";

describe("OAuthStore files", () => {
  it("keeps tokens and client 0600 in a 0700 directory per adapter and server", () => {
    const tmp = tempDir();
    try {
      const store = new OAuthStore(tmp.path, "notes", "search");
      assert.equal(store.dir, path.join(tmp.path, "oauth", "notes", "search"));
      store.writeTokens(toRecord(tokens(), binding, T0));
      store.writeClient({ client_id: "client-1", issuer: ISSUER });
      assert.deepEqual(readdirSync(store.dir).sort(), ["client.json", "tokens.json"]);
      if (posix) {
        for (const d of [store.root, path.dirname(store.dir), store.dir]) assert.equal(mode(d), 0o700, d);
        assert.equal(mode(store.tokensFile), 0o600);
        assert.equal(mode(store.clientFile), 0o600);
      }
      assert.equal(store.readTokens()?.access_token, "at-1");
      assert.equal(store.readClient()?.client_id, "client-1");
    } finally {
      tmp.cleanup();
    }
  });

  it("tightens a directory that exists with looser modes", { skip: !posix }, () => {
    const tmp = tempDir();
    try {
      const store = new OAuthStore(tmp.path, "notes", "search");
      store.writeTokens(toRecord(tokens(), binding, T0));
      chmodSync(store.dir, 0o755);
      chmodSync(store.root, 0o755);
      store.writeTokens(toRecord(tokens({ access_token: "at-2" }), binding, T0));
      assert.equal(mode(store.dir), 0o700);
      assert.equal(mode(store.root), 0o700);
    } finally {
      tmp.cleanup();
    }
  });

  it("reads a file another process replaced, and treats a corrupt one as absent without deleting it", () => {
    const tmp = tempDir();
    try {
      const a = new OAuthStore(tmp.path, "notes", "search");
      const b = new OAuthStore(tmp.path, "notes", "search");
      a.writeTokens(toRecord(tokens(), binding, T0));
      assert.equal(b.readTokens()?.access_token, "at-1");
      const stamp = b.stamp();
      a.writeTokens(toRecord(tokens({ access_token: "at-2" }), binding, T0));
      assert.notEqual(b.stamp(), stamp);
      assert.equal(b.readTokens()?.access_token, "at-2");
      writeFileSync(a.tokensFile, "{not json");
      assert.equal(b.readTokens(), undefined);
      assert.ok(existsSync(a.tokensFile), "a corrupt file is left for the next login to replace");
      assert.equal(new OAuthStore(tmp.path, "x", "y").stamp(), "none");
    } finally {
      tmp.cleanup();
    }
  });

  it("remove() deletes exactly this server's directory", () => {
    const tmp = tempDir();
    try {
      const a = new OAuthStore(tmp.path, "notes", "search");
      const other = new OAuthStore(tmp.path, "notes", "other");
      a.writeTokens(toRecord(tokens(), binding, T0));
      other.writeTokens(toRecord(tokens(), binding, T0));
      assert.equal(a.remove(), true);
      assert.equal(a.remove(), false);
      assert.equal(a.readTokens(), undefined);
      assert.equal(other.readTokens()?.access_token, "at-1");
    } finally {
      tmp.cleanup();
    }
  });

  it("keeps names that could escape the directory inside it", () => {
    const store = new OAuthStore("/state", "../x", "a/b");
    assert.equal(store.dir, path.join("/state", "oauth", "___x", "a_b"));
  });
});

describe("token records", () => {
  it("store an absolute expires_at and rebase expires_in when read, down to 0 once expired", () => {
    const rec = toRecord(tokens(), binding, T0);
    assert.equal(rec.expires_at, new Date(T0 + 3600_000).toISOString());
    assert.equal(expiresAtMs(rec), T0 + 3600_000);
    assert.equal(fromRecord(rec, binding, T0 + 600_000)?.expires_in, 3000);
    // "after a restart" a day later: the token is expired, not valid for another hour
    assert.equal(fromRecord(rec, binding, T0 + 86_400_000)?.expires_in, 0);
    const noExpiry = toRecord(tokens({ expires_in: undefined }), binding, T0);
    assert.equal(noExpiry.expires_at, undefined);
    assert.equal(fromRecord(noExpiry, binding, T0)?.expires_in, undefined);
    const garbled = { ...rec, expires_at: "soon" } as TokenRecord;
    assert.equal(fromRecord(garbled, binding, T0)?.expires_in, 0, "an unreadable expiry counts as expired");
  });

  it("take an expires_in beyond what a date can hold for none given, not a crash", () => {
    // 8.64e12 s is past the last instant a Date holds: toISOString threw "Invalid time value",
    // which failed the login or refresh that carried it
    for (const expires_in of [8.64e12, 1e300]) {
      const rec = toRecord(tokens({ expires_in }), binding, T0);
      assert.equal(rec.expires_at, undefined, String(expires_in));
      assert.equal(fromRecord(rec, binding, T0)?.expires_in, undefined);
    }
    assert.equal(
      toRecord(tokens({ expires_in: 2 ** 31 }), binding, T0).expires_at,
      new Date(T0 + 2 ** 31 * 1000).toISOString(),
    );
  });

  it("keep the refresh token when a refresh response leaves it out", () => {
    const first = toRecord(tokens(), binding, T0);
    const refreshed = toRecord(
      tokens({ access_token: "at-2", refresh_token: undefined }),
      binding,
      T0,
      first,
      true,
    );
    assert.equal(refreshed.access_token, "at-2");
    assert.equal(refreshed.refresh_token, "rt-1");
    const rotated = toRecord(
      tokens({ access_token: "at-3", refresh_token: "rt-2" }),
      binding,
      T0,
      first,
      true,
    );
    assert.equal(rotated.refresh_token, "rt-2");
    // a fresh authorization (no carry-forward) is taken as it is
    const fresh = toRecord(tokens({ refresh_token: undefined }), binding, T0, first, false);
    assert.equal(fresh.refresh_token, undefined);
  });

  it("drop the refresh token when the issuer, the client or the server changed", () => {
    const first = toRecord(tokens(), binding, T0);
    const noRt = { access_token: "at-2", refresh_token: undefined };
    const otherIssuer = toRecord(
      tokens({ ...noRt, issuer: "https://evil.example/" }),
      binding,
      T0,
      first,
      true,
    );
    assert.equal(otherIssuer.refresh_token, undefined);
    assert.equal(otherIssuer.issuer, "https://evil.example/");
    const otherClient = toRecord(tokens(noRt), { ...binding, clientId: "client-2" }, T0, first, true);
    assert.equal(otherClient.refresh_token, undefined);
    const otherServer = toRecord(
      tokens(noRt),
      { ...binding, serverUrl: "https://b.example/mcp" },
      T0,
      first,
      true,
    );
    assert.equal(otherServer.refresh_token, undefined);
  });

  it("are never offered to another MCP server, and their refresh token only with their client", () => {
    const rec = toRecord(tokens(), binding, T0);
    assert.equal(fromRecord(rec, { ...binding, serverUrl: "https://other.example/mcp" }, T0), undefined);
    const other = fromRecord(rec, { ...binding, clientId: "client-2" }, T0);
    assert.equal(other?.access_token, "at-1");
    assert.equal(other?.refresh_token, undefined);
    const same = fromRecord(rec, binding, T0);
    assert.equal(same?.refresh_token, "rt-1");
    assert.equal(same?.issuer, ISSUER, "the issuer goes back to the SDK, which checks it");
  });
});
