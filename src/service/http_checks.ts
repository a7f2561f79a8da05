/**
 * What a session makes of an incoming POST or GET before anything runs, as pure decisions: the
 * answer forms the client takes (Accept), the body's media type and shape, initialize (alone, once,
 * with the protocol version it settles), the protocol version header of later requests. A refusal
 * is the HTTP answer to give; otherwise the messages and what was learnt.
 */
import {
  ErrorCode,
  type JSONRPCMessage,
  type JSONRPCRequest,
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";
import { HTTP_REFUSED, jsonRpcError } from "./http_errors.ts";
import { isMessage, isRequest } from "../mcp/jsonrpc_shape.ts";

export type PostVerdict =
  | { refused: Response }
  | {
    messages: JSONRPCMessage[];
    requests: JSONRPCRequest[];
    batch: boolean;
    /** The client takes plain JSON / a stream. */
    json: boolean;
    sse: boolean;
    /** For an initialize: the protocol version the session speaks from now on. */
    initializes?: string;
  };

/** A POST to a session that is (`initialized`) or is not yet initialized. */
export function checkPost(req: Request, body: unknown, initialized: boolean): PostVerdict {
  const accept = req.headers.get("accept") ?? "";
  const any = accept.includes("*/*");
  const json = any || accept.includes("application/json");
  const sse = any || accept.includes("text/event-stream");
  if (!json && !sse) {
    return {
      refused: jsonRpcError(
        406,
        HTTP_REFUSED,
        "Not Acceptable: accept application/json and text/event-stream",
      ),
    };
  }
  if (!/^application\/json\s*(;|$)/i.test(req.headers.get("content-type") ?? "")) {
    return {
      refused: jsonRpcError(
        415,
        HTTP_REFUSED,
        "Unsupported Media Type: Content-Type must be application/json",
      ),
    };
  }
  const batch = Array.isArray(body);
  const raw = (batch ? body : [body]) as unknown[];
  if (raw.length === 0 || !raw.every(isMessage)) {
    return {
      refused: jsonRpcError(400, ErrorCode.InvalidRequest, "Invalid Request: not a JSON-RPC 2.0 message"),
    };
  }
  const messages = raw as JSONRPCMessage[];
  const requests = messages.filter(isRequest);
  const init = requests.find((m) => m.method === "initialize");
  if (!init) {
    if (!initialized) {
      return { refused: jsonRpcError(400, HTTP_REFUSED, "Bad Request: the session is not initialized") };
    }
    const bad = checkVersion(req);
    return bad ? { refused: bad } : { messages, requests, batch, json, sse };
  }
  if (initialized) {
    return {
      refused: jsonRpcError(
        400,
        ErrorCode.InvalidRequest,
        "Invalid Request: the session is already initialized",
      ),
    };
  }
  if (messages.length > 1) {
    return {
      refused: jsonRpcError(400, ErrorCode.InvalidRequest, "Invalid Request: initialize must come alone"),
    };
  }
  const asked = (init.params as { protocolVersion?: unknown } | undefined)?.protocolVersion;
  const initializes = typeof asked === "string" && SUPPORTED_PROTOCOL_VERSIONS.includes(asked)
    ? asked
    : LATEST_PROTOCOL_VERSION;
  return { messages, requests, batch, json, sse, initializes };
}

/** A GET for the session's event stream (or a resumed one). */
export function checkGet(req: Request): Response | undefined {
  if (!(req.headers.get("accept") ?? "").includes("text/event-stream")) {
    return jsonRpcError(406, HTTP_REFUSED, "Not Acceptable: accept text/event-stream");
  }
  return checkVersion(req);
}

/** A later request's MCP-Protocol-Version, when it names one, must be one hermit speaks. */
function checkVersion(req: Request): Response | undefined {
  const v = req.headers.get("mcp-protocol-version");
  if (v === null || SUPPORTED_PROTOCOL_VERSIONS.includes(v)) return undefined;
  return jsonRpcError(
    400,
    HTTP_REFUSED,
    `Bad Request: unsupported protocol version ${v} (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")})`,
  );
}
