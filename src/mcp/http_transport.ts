/**
 * The SDK's client transports for a remote upstream (Streamable HTTP, legacy SSE), in a module of
 * their own: with the OAuth client and the event-stream parser behind them they are what only an
 * adapter with a remote upstream needs, so `upstream_transport.ts` loads this on the first one.
 */
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { FetchLike, Transport } from "@modelcontextprotocol/sdk/shared/transport.js";

export interface HttpTransportOptions {
  requestInit: RequestInit;
  authProvider?: OAuthClientProvider;
  fetch?: FetchLike;
}

/** A not yet started transport to `url`, Streamable HTTP or legacy SSE by `kind`. */
export function httpTransport(kind: "http" | "sse", url: URL, opts: HttpTransportOptions): Transport {
  return kind === "sse" ? new SSEClientTransport(url, opts) : new StreamableHTTPClientTransport(url, opts);
}
