/**
 * One connection from a relay to its service: a Streamable HTTP client transport carrying the
 * bearer token. On a new service session for a host that already has its `initialize` answer,
 * the host's `initialize` is replayed under an id of the relay's (its answer stays here). A
 * connection that fails half way, and one the relay is done with, ends its service session, so
 * the service does not go on counting it as a client.
 */
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { JSONRPCMessage, JSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";
import { within } from "../process/wait.ts";
import { isResponse } from "./relay_policy.ts";

export interface ServiceAddress {
  url: string;
  token?: string;
}

/** The host's `initialize` to replay, and whether the host went on to `notifications/initialized`. */
export interface Replay {
  init: JSONRPCRequest;
  initialized: boolean;
}

export interface ConnectionHandlers {
  onmessage(m: JSONRPCMessage): void;
  onerror(err: Error, transport: StreamableHTTPClientTransport): void;
}

/** How long the service may take to answer a replayed `initialize`. */
const REPLAY_MS = 30_000;
let replays = 0;

/** Connect; with `replay`, initialize the new session too. Throws when that fails (nothing left open). */
export async function openService(
  addr: ServiceAddress,
  handlers: ConnectionHandlers,
  replay?: Replay,
): Promise<StreamableHTTPClientTransport> {
  const transport = new StreamableHTTPClientTransport(new URL(addr.url), {
    requestInit: addr.token ? { headers: { Authorization: `Bearer ${addr.token}` } } : undefined,
  });
  const replayId = `hermit-relay-init-${++replays}`;
  let answered: ((m: JSONRPCMessage) => void) | undefined;
  transport.onmessage = (m) => {
    // the replay's answer is the relay's own, even when it comes too late
    if (isResponse(m) && m.id === replayId) return answered?.(m);
    handlers.onmessage(m);
  };
  transport.onerror = (err) => handlers.onerror(err, transport);
  await transport.start();
  if (!replay) return transport;
  try {
    const answer = new Promise<JSONRPCMessage>((resolve) => (answered = resolve));
    await transport.send({ ...replay.init, id: replayId });
    const res = await within(answer, REPLAY_MS) as
      | { result?: { protocolVersion?: string }; error?: { message: string } }
      | undefined;
    if (!res) throw new Error(`no answer to the replayed initialize within ${REPLAY_MS / 1000} s`);
    if (res.error) throw new Error(`the service refused initialize: ${res.error.message}`);
    if (res.result?.protocolVersion) transport.setProtocolVersion(res.result.protocolVersion);
    if (replay.initialized) await transport.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    return transport;
  } catch (err) {
    await closeService(transport);
    throw err;
  } finally {
    answered = undefined;
  }
}

/**
 * Does the service still hold this connection's session? Asked of the session itself (a GET for
 * its event stream), not of `/health`: behind a balancer `/health` answers from any replica, and
 * only the one holding the session knows it. False when nothing answers, or the answer is 404 (or
 * a refused token); true otherwise (409: its stream is open; 503: draining, still finishing).
 */
export async function sessionAlive(
  addr: ServiceAddress,
  transport: StreamableHTTPClientTransport,
): Promise<boolean> {
  if (!transport.sessionId) return false;
  try {
    const res = await fetch(addr.url, {
      headers: {
        accept: "text/event-stream",
        "mcp-session-id": transport.sessionId,
        ...(addr.token ? { authorization: `Bearer ${addr.token}` } : {}),
      },
      signal: AbortSignal.timeout(2000),
    });
    await res.body?.cancel().catch(() => {});
    return res.status !== 404 && res.status !== 401 && res.status !== 403;
  } catch {
    return false;
  }
}

/** End the service session (briefly: the service may be gone) and close the transport. */
export async function closeService(transport: StreamableHTTPClientTransport): Promise<void> {
  await within(transport.terminateSession().catch(() => {}), 1000);
  await transport.close().catch(() => {});
}
