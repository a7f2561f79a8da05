/**
 * The authorization server discovery found, checked before hermit sends it anything: metadata
 * whose `issuer` is not the URL it was discovered at (RFC 8414 §3.3), and plain http off loopback
 * for the server or its endpoints, are refused — by the login provider (`iss` is then compared
 * with the verified issuer) and by the non-interactive one (no refresh token is presented).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { auth, type OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthMetadata } from "@modelcontextprotocol/sdk/shared/auth.js";
import { verifyDiscovery } from "../../../src/mcp/oauth/discovery.ts";
import { isLoopback } from "../../../src/gates/loopback.ts";
import { LoginOAuthProvider } from "../../../src/mcp/oauth/login_provider.ts";
import { RuntimeOAuthProvider } from "../../../src/mcp/oauth/runtime_provider.ts";
import { OAuthStore } from "../../../src/mcp/oauth/store.ts";
import { AS, fakeServer, MCP, setup } from "../../helpers/oauth_provider.ts";
import { tempDir } from "../../helpers/tmp.ts";

function state(at: string, meta: Partial<OAuthMetadata> & Record<string, unknown> = {}): OAuthDiscoveryState {
  const issuer = (meta.issuer as string | undefined) ?? at;
  return {
    authorizationServerUrl: at,
    authorizationServerMetadata: {
      issuer,
      authorization_endpoint: new URL("/authorize", issuer).href,
      token_endpoint: new URL("/token", issuer).href,
      registration_endpoint: new URL("/register", issuer).href,
      response_types_supported: ["code"],
      ...meta,
    } as OAuthMetadata,
  };
}

const refused = (re: RegExp) => (err: Error) => {
  assert.match(err.message, re);
  assert.ok(!err.message.includes("\n"), "one line");
  return true;
};

describe("verifyDiscovery", () => {
  it("takes metadata naming the URL it was discovered at (up to a trailing slash), and says whether iss is promised", () => {
    assert.deepEqual(verifyDiscovery(state("https://auth.example/"), "x"), {
      issuer: "https://auth.example/",
      issRequired: false,
    });
    assert.deepEqual(
      verifyDiscovery(
        state("https://auth.example/", {
          issuer: "https://auth.example",
          authorization_response_iss_parameter_supported: true,
        }),
        "x",
      ),
      { issuer: "https://auth.example", issRequired: true },
    );
    const local = "http://127.0.0.1:4000/";
    assert.equal(verifyDiscovery(state(local), "x").issuer, local);
    assert.equal(
      verifyDiscovery({ authorizationServerUrl: "https://auth.example/" }, "x").issuer,
      "https://auth.example/",
    );
  });

  it("refuses metadata naming another issuer, in one line naming both", () => {
    assert.throws(
      () =>
        verifyDiscovery(state("http://127.0.0.1:4000/", { issuer: "http://127.0.0.1:9/" }), "not logging in"),
      {
        message:
          "the authorization server at http://127.0.0.1:4000/ says its issuer is http://127.0.0.1:9/ " +
          "(RFC 8414 requires them to match); not logging in",
      },
    );
  });

  it("refuses plain http off loopback for the server and for its endpoints", () => {
    assert.throws(
      () => verifyDiscovery(state("http://192.0.2.2/"), "not logging in"),
      refused(/^the authorization server http:\/\/192\.0\.2\.2\/ is not https .*; not logging in$/),
    );
    assert.throws(
      () => verifyDiscovery({ authorizationServerUrl: "http://192.0.2.2/" }, "x"),
      refused(/is not https/),
    );
    for (
      const token_endpoint of ["http://192.0.2.2/token", "http://127.0.0.1:5/token", "ftp://auth.example/t"]
    ) {
      assert.throws(
        () => verifyDiscovery(state("https://auth.example/", { token_endpoint }), "x"),
        refused(
          new RegExp(`has its token_endpoint at ${token_endpoint.replace(/\./g, "\\.")}, which is not https`),
        ),
        token_endpoint,
      );
    }
    // https elsewhere is the issuer's to decide (Google's token endpoint is on oauth2.googleapis.com)
    const google = state("https://accounts.google.com", {
      token_endpoint: "https://oauth2.googleapis.com/token",
    });
    assert.equal(verifyDiscovery(google, "x").issuer, "https://accounts.google.com");
    // loopback to loopback (the tests' servers)
    const lo = state("http://127.0.0.1:4000/", { token_endpoint: "http://localhost:4001/token" });
    assert.equal(verifyDiscovery(lo, "x").issuer, "http://127.0.0.1:4000/");
  });

  it("knows loopback", () => {
    for (const u of ["http://127.0.0.1:1/", "http://127.8.9.10/", "http://[::1]:80/", "http://localhost/"]) {
      assert.ok(isLoopback(new URL(u)), u);
    }
    for (
      const u of ["http://192.0.2.2/", "http://localhost.evil.example/", "http://127.0.0.1.evil.example/"]
    ) {
      assert.ok(!isLoopback(new URL(u)), u);
    }
  });
});

describe("LoginOAuthProvider.saveDiscoveryState", () => {
  const provider = () => {
    const tmp = tempDir();
    const store = new OAuthStore(tmp.path, "notes", "remote");
    tmp.cleanup();
    return new LoginOAuthProvider({
      store,
      serverUrl: MCP,
      oauth: {},
      redirectUrl: "http://127.0.0.1:5/callback",
      relogin: "log in again",
    });
  };

  it("refuses an issuer that is not the URL discovery found, so its iss is never trusted", () => {
    const p = provider();
    assert.throws(
      () => p.saveDiscoveryState(state("http://127.0.0.1:4000/", { issuer: "http://127.0.0.1:9/" })),
      refused(
        /says its issuer is http:\/\/127\.0\.0\.1:9\/ \(RFC 8414 requires them to match\); not logging in$/,
      ),
    );
    assert.notEqual(p.issuer, "http://127.0.0.1:9/");
  });

  it("refuses plain http off loopback", () => {
    assert.throws(() => provider().saveDiscoveryState(state("http://192.0.2.2/")), refused(/is not https/));
  });

  it("keeps the verified issuer and whether it promises iss", () => {
    const p = provider();
    p.saveDiscoveryState(state(AS, { authorization_response_iss_parameter_supported: true }));
    assert.equal(p.issuer, AS);
    assert.equal(p.issRequired, true);
  });
});

describe("RuntimeOAuthProvider with an authorization server it must not trust", () => {
  /** setup()'s stored, expired login, refreshed through `fetch` instead. */
  const runWith = (edit: (meta: Record<string, unknown>) => void, issuer = AS) => {
    const s = setup({ issuer });
    const server = fakeServer({ issuer, refresh: "omit", delayMs: 0 });
    const fetchFn = async (url: string | URL, init?: RequestInit) => {
      const res = await server.fetchFn(url, init);
      if (!new URL(String(url)).pathname.startsWith("/.well-known/oauth-authorization-server")) return res;
      const meta = await res.json();
      edit(meta);
      return Response.json(meta);
    };
    const provider = new RuntimeOAuthProvider({
      store: s.store,
      serverUrl: MCP,
      oauth: {},
      server: "remote",
      adapterDir: "/a",
      fetch: fetchFn,
    });
    return { s, server, run: () => auth(provider, { serverUrl: MCP, fetchFn: provider.guard.fetch }) };
  };

  it("never presents the refresh token when the metadata names another issuer", async () => {
    const { s, server, run } = runWith((m) => (m.issuer = "https://evil.example/"));
    try {
      const before = s.snapshot();
      await assert.rejects(run(), refused(/says its issuer is https:\/\/evil\.example\/ \(RFC 8414/));
      assert.equal(server.tokenCalls().length, 0);
      assert.deepEqual(s.snapshot(), before);
    } finally {
      s.tmp.cleanup();
    }
  });

  it("never presents the refresh token over plain http off loopback", async () => {
    const { s, server, run } = runWith((m) => (m.token_endpoint = "http://auth.example/token"));
    try {
      await assert.rejects(
        run(),
        refused(/token_endpoint at http:\/\/auth\.example\/token, which is not https/),
      );
      assert.equal(server.tokenCalls().length, 0);
    } finally {
      s.tmp.cleanup();
    }
  });
});
