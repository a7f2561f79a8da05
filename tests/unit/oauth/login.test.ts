/**
 * The login side: what a pasted answer means, the login provider writing nothing until
 * `commit()`, which client it reuses, the usage errors of `hermit login`/`logout`, and where the
 * stored login is looked for.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { Exit, HermitError } from "../../../src/errors.ts";
import { parseManifest } from "../../../src/manifest/load.ts";
import { parsePasted } from "../../../src/mcp/oauth/callback.ts";
import { contextFrom } from "../../../src/manifest/interpolate.ts";
import { logout, oauthUpstream } from "../../../src/mcp/oauth/login.ts";
import { createRuntimeAuth } from "../../../src/mcp/oauth/runtime_provider.ts";
import { LoginOAuthProvider } from "../../../src/mcp/oauth/login_provider.ts";
import { OAuthStore, toRecord } from "../../../src/mcp/oauth/store.ts";
import { describeFailure } from "../../../src/mcp/upstream_client.ts";
import { tempDir } from "../../helpers/tmp.ts";

const MCP = "https://mcp.example/mcp";

describe("parsePasted", () => {
  it("takes the address the browser ended on, a query string, or the bare code", () => {
    const pasted = "pasted-address";
    assert.deepEqual(parsePasted("http://127.0.0.1:4567/callback?code=abc&state=s1\n"), {
      kind: "code",
      code: "abc",
      state: "s1",
      origin: pasted,
    });
    assert.deepEqual(parsePasted("  ?code=abc&state=s1 "), {
      kind: "code",
      code: "abc",
      state: "s1",
      origin: pasted,
    });
    assert.deepEqual(
      parsePasted("http://127.0.0.1:1/callback?code=abc&state=s1&iss=https%3A%2F%2Fas.example%2F"),
      {
        kind: "code",
        code: "abc",
        state: "s1",
        iss: "https://as.example/",
        origin: pasted,
      },
    );
    assert.deepEqual(parsePasted("/callback?code=abc"), { kind: "code", code: "abc", origin: pasted });
    assert.deepEqual(parsePasted("AbC-123_x.y~z"), {
      kind: "code",
      code: "AbC-123_x.y~z",
      origin: "pasted-code",
    });
  });
  it("reports an error answer, a cancel, and nothing usable", () => {
    assert.deepEqual(
      parsePasted("http://127.0.0.1:1/callback?error=access_denied&error_description=no&state=s"),
      { kind: "error", error: "access_denied", description: "no", state: "s", origin: "pasted-address" },
    );
    for (const q of ["q", "quit", "CANCEL", "skip"]) assert.equal(parsePasted(q), "cancel");
    for (const junk of ["", "   ", "two words", "http://127.0.0.1:1/callback?foo=bar", "http://[bad"]) {
      assert.equal(parsePasted(junk), undefined, JSON.stringify(junk));
    }
  });
});

function provider(store: OAuthStore, redirectUrl: string, oauth = {}) {
  return new LoginOAuthProvider({ store, serverUrl: MCP, oauth, redirectUrl, relogin: "log in again" });
}

describe("LoginOAuthProvider", () => {
  it("keeps a new client and tokens in memory until commit(), then writes both", () => {
    const tmp = tempDir();
    try {
      const store = new OAuthStore(tmp.path, "notes", "remote");
      const p = provider(store, "http://127.0.0.1:5000/callback");
      assert.equal(p.tokens(), undefined);
      assert.equal(p.clientInformation(), undefined, "nothing stored: the SDK registers a client");
      p.saveClientInformation({ client_id: "new-client", issuer: "https://auth.example/" });
      p.saveCodeVerifier("verifier");
      p.saveTokens({ access_token: "at", token_type: "bearer", refresh_token: "rt", expires_in: 60 });
      assert.equal(existsSync(store.dir), false, "nothing on disk before the login succeeded");
      p.commit();
      assert.equal(store.readClient()?.client_id, "new-client");
      const rec = store.readTokens()!;
      assert.equal(rec.client_id, "new-client");
      assert.equal(rec.server_url, MCP);
      assert.equal(rec.refresh_token, "rt");
      assert.ok(
        !readFileSync(store.tokensFile, "utf8").includes("verifier"),
        "the PKCE verifier is never stored",
      );
    } finally {
      tmp.cleanup();
    }
  });

  it("asks again even with a working stored token, and reuses the stored client only for its redirect URI", () => {
    const tmp = tempDir();
    try {
      const store = new OAuthStore(tmp.path, "notes", "remote");
      store.writeClient({ client_id: "old", redirect_uris: ["http://127.0.0.1:5000/callback"] } as never);
      store.writeTokens(
        toRecord(
          { access_token: "at", token_type: "bearer" },
          { serverUrl: MCP, clientId: "old" },
          Date.now(),
        ),
      );
      assert.equal(provider(store, "http://127.0.0.1:5000/callback").tokens(), undefined);
      assert.equal(provider(store, "http://127.0.0.1:5000/callback").clientInformation()?.client_id, "old");
      assert.equal(provider(store, "http://127.0.0.1:6000/callback").clientInformation(), undefined);
      const refused = provider(store, "http://127.0.0.1:5000/callback");
      refused.invalidateCredentials("all");
      assert.equal(refused.clientInformation(), undefined, "a client the server refused is registered anew");
    } finally {
      tmp.cleanup();
    }
  });

  it("uses a configured client as it is and never writes its secret", () => {
    const tmp = tempDir();
    try {
      const store = new OAuthStore(tmp.path, "notes", "remote");
      const p = provider(store, "http://127.0.0.1:5000/callback", {
        clientId: "cfg",
        clientSecret: "s3cret",
      });
      assert.deepEqual(p.clientInformation(), { client_id: "cfg", client_secret: "s3cret" });
      p.saveClientInformation({ client_id: "cfg", client_secret: "s3cret", issuer: "https://auth.example/" });
      p.saveTokens({ access_token: "at", token_type: "bearer" });
      p.commit();
      assert.equal(existsSync(store.clientFile), false);
      assert.equal(store.readTokens()?.client_id, "cfg");
      assert.ok(!readFileSync(store.tokensFile, "utf8").includes("s3cret"));
    } finally {
      tmp.cleanup();
    }
  });
});

describe("oauthUpstream", () => {
  const m = parseManifest(
    "name: t\nexports: { tools: [a] }\nmcp_servers:\n" +
      "  remote: { url: 'https://mcp.example/mcp', auth: oauth }\n" +
      "  plain: { url: 'https://mcp.example/mcp' }\n" +
      "  local: { command: npx, auth: oauth }\n",
    "/x/hermit.yaml",
    "/x",
  ).manifest;
  const usage = (server: string, re: RegExp) =>
    assert.throws(
      () => oauthUpstream(m, server),
      (e: unknown) => e instanceof HermitError && e.exitCode === Exit.usage && re.test(e.message),
    );
  it("accepts an auth: oauth url server and refuses the rest as usage errors", () => {
    assert.equal(oauthUpstream(m, "remote").name, "remote");
    usage("nope", /has no mcp_servers\.nope; its servers: remote, plain, local/);
    usage("plain", /does not use OAuth; add 'auth: oauth'/);
    usage("local", /is a stdio server/);
  });
});

describe("where the stored login is", () => {
  const m = parseManifest(
    "name: notes\nexports: { tools: [a] }\nmcp_servers:\n  remote: { url: 'https://mcp.example/mcp', auth: oauth }\n",
    "/x/hermit.yaml",
    "/x",
  ).manifest;

  it("logout and the runtime provider both look in the state dir of the environment they are given", () => {
    const tmp = tempDir();
    try {
      const env = { HOME: tmp.path }; // not hermit's own HOME, and no HERMIT_HOME
      const expected = path.join(tmp.path, ".local", "state", "hermit", "oauth", "notes", "remote");
      assert.deepEqual(logout(m, "remote", { env, platform: "linux" }), { removed: false, dir: expected });
      const auth = createRuntimeAuth(m.upstreams.remote, {
        platform: "linux",
        env,
        adapter: m.name,
        adapterDir: m.dir,
        interpolation: contextFrom(env, m.dir),
      });
      assert.equal(auth.provider.store.dir, expected);
    } finally {
      tmp.cleanup();
    }
  });
});

describe("describeFailure for OAuth", () => {
  it("words a 401 from a server hermit has no login for, and one right after authorizing", () => {
    const e401 = Object.assign(new Error("Streamable HTTP error: Error POSTing to endpoint: {}"), {
      code: 401,
    });
    const plain = { stderrTail: [], oauth: false };
    assert.match(
      describeFailure(e401, plain),
      /^the server requires authorization \(HTTP 401\): add 'auth: oauth'/,
    );
    // with an OAuth provider the SDK authorizes before it reports a 401: the new token was refused
    const again = Object.assign(new Error("Server returned 401 after successful authentication"), {
      code: 401,
    });
    assert.match(
      describeFailure(again, { stderrTail: [], oauth: true }),
      /refused hermit's new OAuth access token/,
    );
    assert.equal(describeFailure(new Error("plain"), plain), "plain");
  });
});
