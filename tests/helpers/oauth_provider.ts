/**
 * A scripted OAuth authorization server behind a fetch function (recording every request), and a
 * `RuntimeOAuthProvider` on a fresh store holding an expired login, for the provider's unit tests.
 */
import { readFileSync } from "node:fs";
import { auth } from "@modelcontextprotocol/sdk/client/auth.js";
import { RuntimeOAuthProvider } from "../../src/mcp/oauth/runtime_provider.ts";
import { OAuthStore, toRecord } from "../../src/mcp/oauth/store.ts";
import { tempDir } from "./tmp.ts";

export const MCP = "https://mcp.example/mcp";
export const AS = "https://auth.example/";

export interface Script {
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
export function fakeServer(script: Script) {
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

export function setup(script: Partial<Script> = {}, stored = true, refreshTimeoutMs?: number) {
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
