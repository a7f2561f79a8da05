/**
 * The non-interactive provider driven by the SDK's real `auth()` against a scripted authorization
 * server: refresh with carry-forward, an issuer change, a refused or unavailable refresh (never
 * deleting anything), no client registration from a non-interactive process, and concurrent
 * refreshes merged into one request, in one process and across processes sharing the login.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import path from "node:path";
import { auth } from "@modelcontextprotocol/sdk/client/auth.js";
import { NeedsLogin, RefreshUnavailable } from "../../../src/mcp/oauth/errors.ts";
import { RuntimeOAuthProvider } from "../../../src/mcp/oauth/runtime_provider.ts";
import { OAuthStore, toRecord } from "../../../src/mcp/oauth/store.ts";
import { tryLock } from "../../../src/platform/lock.ts";
import { tempDir } from "../../helpers/tmp.ts";

const MCP = "https://mcp.example/mcp";
const AS = "https://auth.example/";

interface Script {
  issuer: string;
  refresh:
    | "omit"
    | "rotate"
    | "invalid_grant"
    | "invalid_client"
    | "503"
    | "down"
    | "html"
    | "no_token"
    | "hang";
  delayMs: number;
}

/** A scripted authorization server behind a fetch function, recording every request. */
function fakeServer(script: Script) {
  const calls: { path: string; body?: URLSearchParams }[] = [];
  let n = 0;
  const json = (v: unknown, status = 200) =>
    new Response(JSON.stringify(v), { status, headers: { "content-type": "application/json" } });
  const fetchFn = async (url: string | URL, init?: RequestInit): Promise<Response> => {
    const u = new URL(String(url));
    const body = init?.body instanceof URLSearchParams ? init.body : undefined;
    calls.push({ path: u.pathname, body });
    if (u.pathname.startsWith("/.well-known/oauth-protected-resource")) {
      return json({ resource: MCP, authorization_servers: [script.issuer] });
    }
    if (u.pathname.startsWith("/.well-known/oauth-authorization-server")) {
      return json({
        issuer: script.issuer,
        authorization_endpoint: new URL("/authorize", script.issuer).href,
        token_endpoint: new URL("/token", script.issuer).href,
        registration_endpoint: new URL("/register", script.issuer).href,
        response_types_supported: ["code"],
        code_challenge_methods_supported: ["S256"],
      });
    }
    if (u.pathname === "/token") {
      await new Promise((r) => setTimeout(r, script.delayMs));
      if (script.refresh === "down") throw new TypeError("fetch failed: connection refused");
      if (script.refresh === "503") return new Response("busy", { status: 503 });
      if (script.refresh === "html") {
        return new Response("<html>portal</html>", { headers: { "content-type": "text/html" } });
      }
      if (script.refresh === "no_token") return json({ token_type: "bearer", expires_in: 60 });
      if (script.refresh === "hang") {
        return await new Promise<Response>((_, reject) =>
          init?.signal?.addEventListener("abort", () => reject(init.signal!.reason))
        );
      }
      if (script.refresh === "invalid_grant") return json({ error: "invalid_grant" }, 400);
      if (script.refresh === "invalid_client") return json({ error: "invalid_client" }, 401);
      n++;
      const t: Record<string, unknown> = {
        access_token: `at-new-${n}`,
        token_type: "bearer",
        expires_in: 60,
      };
      if (script.refresh === "rotate") t.refresh_token = `rt-new-${n}`;
      return json(t);
    }
    return new Response("not found", { status: 404 });
  };
  return { calls, fetchFn, tokenCalls: () => calls.filter((c) => c.path === "/token") };
}

function setup(script: Partial<Script> = {}, stored = true, refreshTimeoutMs?: number) {
  const tmp = tempDir();
  const store = new OAuthStore(tmp.path, "notes", "remote");
  const T0 = Date.now() - 3600_000;
  if (stored) {
    store.writeClient(
      { client_id: "client-1", issuer: AS, redirect_uris: ["http://127.0.0.1:5000/callback"] } as never,
    );
    store.writeTokens(
      toRecord(
        { access_token: "at-old", token_type: "bearer", expires_in: 60, refresh_token: "rt-1", issuer: AS },
        { serverUrl: MCP, clientId: "client-1" },
        T0,
      ),
    );
  }
  const server = fakeServer({ issuer: AS, refresh: "omit", delayMs: 0, ...script });
  const provider = new RuntimeOAuthProvider({
    store,
    serverUrl: MCP,
    oauth: {},
    server: "remote",
    adapterDir: "/work/my adapter",
    fetch: server.fetchFn,
    refreshTimeoutMs,
  });
  const snapshot = () => [readFileSync(store.tokensFile, "utf8"), readFileSync(store.clientFile, "utf8")];
  const run = () => auth(provider, { serverUrl: MCP, fetchFn: provider.guard.fetch });
  return { tmp, store, server, provider, snapshot, run };
}

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
        (err: Error) => err instanceof NeedsLogin && /is now https:\/\/other-auth/.test(err.message),
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
});
