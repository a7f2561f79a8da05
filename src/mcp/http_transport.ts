/**
 * The SDK's client transports for a remote upstream (Streamable HTTP, legacy SSE), in a module of
 * their own: with the OAuth client and the event-stream parser behind them they are what only an
 * adapter with a remote upstream needs, so `upstream_transport.ts` loads this on the first one.
 * Requests for this machine's loopback never go through a proxy (`keepLoopbackOffProxies`).
 */
import process from "node:process";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { FetchLike, Transport } from "@modelcontextprotocol/sdk/shared/transport.js";

export interface HttpTransportOptions {
  requestInit: RequestInit;
  authProvider?: OAuthClientProvider;
  fetch?: FetchLike;
}

const PROXY_VARS = ["HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"];
const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "::1"];

/**
 * No proxy can reach this machine's loopback, yet Bun's and Deno's fetch send a request for
 * 127.0.0.1 to `HTTP_PROXY` unless `NO_PROXY` names it (Go's never does): the request, bearer
 * token and all, crossed the network in cleartext to a proxy that then failed or reached its own
 * loopback. With a proxy set, the loopback names join hermit's own `NO_PROXY` and `no_proxy`
 * (both the union of the two, so a runtime that reads either one sees every entry). Idempotent.
 */
export function keepLoopbackOffProxies(env: Record<string, string | undefined> = process.env): void {
  if (!PROXY_VARS.some((k) => env[k])) return;
  const listed = [env.NO_PROXY, env.no_proxy].flatMap((v) => (v ?? "").split(",")).map((s) => s.trim());
  if (listed.includes("*")) return;
  const names = [...new Set([...listed.filter(Boolean), ...LOOPBACK_NAMES])].join(",");
  env.NO_PROXY = names;
  env.no_proxy = names;
}

/** A not yet started transport to `url`, Streamable HTTP or legacy SSE by `kind`. */
export function httpTransport(kind: "http" | "sse", url: URL, opts: HttpTransportOptions): Transport {
  keepLoopbackOffProxies();
  return kind === "sse" ? new SSEClientTransport(url, opts) : new StreamableHTTPClientTransport(url, opts);
}
