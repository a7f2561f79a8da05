/**
 * The JSON-RPC error bodies the service's HTTP side answers with (`id: null`: they answer an HTTP
 * request, not one message). Codes are the SDK's `ErrorCode` where it names one; the two the
 * Streamable HTTP transport uses without naming them are named here.
 */
/** JSON-RPC's implementation-defined server error: the HTTP layer turned the request away. */
export const HTTP_REFUSED = -32000;
/** The session id is unknown (ended, expired, or another replica's): start a new session. */
export const SESSION_NOT_FOUND = -32001;
/**
 * Too many requests are open at once (`serve.max_connections`): this one was not taken, and the
 * session is fine; send it again after Retry-After (unlike a draining service's 503: go elsewhere).
 */
export const SERVICE_BUSY = -32003;

export function jsonRpcError(
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}
