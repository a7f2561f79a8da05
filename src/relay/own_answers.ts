/**
 * What the relay answers the host itself, without the service (pure), an invalid message aside:
 * any request once the service refused the relay for good; a request before any `initialize`
 * (JSON-RPC's Invalid Request: a client sends initialize first, as the MCP lifecycle says); a
 * `ping` before a session exists; and, while the service is not up yet, the host's initialize and
 * (when the cache knows it all) tools/list, from the warm answers (`warm.ts`).
 */
import { errorLine, type Message, resultLine, RpcCode } from "./jsonrpc.ts";
import type { Request } from "./ledger.ts";
import type { WarmAnswers } from "./warm.ts";

/** What the relay knows of its host and service when a host message comes. */
export interface HostState {
  /** Why the service refused the relay for good, once it has. */
  refusal: string | undefined;
  /** The host's initialize, once it has come. */
  init: Request | undefined;
  /** A session takes the host's messages. */
  open: boolean;
}

/** Handled here: the line for the host (none: dropped); undefined when `m` goes on. */
export function ownAnswer(
  m: Exclude<Message, { kind: "invalid" }>,
  s: HostState,
): { line: string | undefined } | undefined {
  if (s.refusal) {
    return {
      line: m.kind === "request" ? errorLine(m.id, RpcCode.InternalError, `hermit: ${s.refusal}`) : undefined,
    };
  }
  if (m.kind !== "request") return undefined;
  if (m.method !== "initialize" && m.method !== "ping" && !s.init) {
    return {
      line: errorLine(
        m.id,
        RpcCode.InvalidRequest,
        `Invalid Request: '${m.method}' before initialize; a client sends initialize first (MCP lifecycle)`,
      ),
    };
  }
  // ping may come at any time; before a session exists it is answered here
  if (m.method === "ping" && !s.open) return { line: resultLine(m.id, {}) };
  return undefined;
}

/**
 * Before the service is up: the answer to the host's own initialize (`isInit`; replayed to the
 * service once it is up), or to tools/list when the warm answers know it all, with its tools.
 */
export function warmAnswer(
  m: Request,
  warm: WarmAnswers | undefined,
  isInit: boolean,
): { line: string; tools?: unknown } | undefined {
  if (!warm) return undefined;
  if (m.method === "initialize" && isInit) {
    const requested = (m.req.params as { protocolVersion?: unknown } | undefined)?.protocolVersion;
    return { line: resultLine(m.id, warm.initialize(requested)) };
  }
  if (m.method !== "tools/list") return undefined;
  const result = warm.toolsList();
  return result && { line: resultLine(m.id, result), tools: result.tools };
}
