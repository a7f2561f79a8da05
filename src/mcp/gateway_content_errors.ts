/**
 * What the content router (gateway_content.ts) tells a host when an item cannot be served: an
 * upstream's error with its message sanitized (gate 4), and the line for a resource URI that
 * several servers list.
 */
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { mcpMessageOf } from "../errors.ts";
import { sanitizeErrorMessage } from "../gates/sanitize.ts";

/** Why a resource URI several servers list (as hosts see it) is served by none of them. */
export function contestedLine(uri: string, servers: string[]): string {
  const by = servers.map((s) => `mcp_servers.${s}`).join(" and ");
  return `resource ${sanitizeErrorMessage(uri)} is listed by ${by}: served by neither`;
}

/** An upstream's error on its way to a host: its code kept, its message sanitized (gate 4). */
export function cleanError(err: unknown): Error {
  const code = (err as { code?: unknown }).code;
  const message = sanitizeErrorMessage(mcpMessageOf(err));
  return Object.assign(new Error(message), {
    code: typeof code === "number" ? code : ErrorCode.InternalError,
  });
}
