/**
 * The shape of JSON-RPC 2.0 messages as MCP uses them, checked cheaply: what the service's HTTP
 * side needs to route a message (request, notification or response). Parameters are validated by
 * whoever handles the message, not here.
 */
import type { JSONRPCMessage, JSONRPCRequest, RequestId } from "@modelcontextprotocol/sdk/types.js";

const isId = (id: unknown): id is RequestId =>
  typeof id === "string" || (typeof id === "number" && Number.isInteger(id));

export function isMessage(m: unknown): m is JSONRPCMessage {
  if (typeof m !== "object" || m === null || Array.isArray(m)) return false;
  const o = m as Record<string, unknown>;
  if (o.jsonrpc !== "2.0") return false;
  if (typeof o.method === "string") {
    const params = o.params;
    const paramsOk = params === undefined ||
      (typeof params === "object" && params !== null && !Array.isArray(params));
    return paramsOk && (!("id" in o) || isId(o.id));
  }
  if (!isId(o.id)) return false;
  return "result" in o
    ? typeof o.result === "object" && o.result !== null
    : typeof o.error === "object" && o.error !== null;
}

export const isRequest = (m: JSONRPCMessage): m is JSONRPCRequest => "method" in m && "id" in m;

export const isResponse = (m: JSONRPCMessage): m is JSONRPCMessage & { id: RequestId } =>
  !("method" in m) && "id" in m;
