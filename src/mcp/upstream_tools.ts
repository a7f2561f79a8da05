/**
 * An upstream's tool list: every page (at most 50, like Hermes, so a broken cursor cannot spin),
 * filtered by the server's include/exclude on raw names, and mapped to exported names.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { log } from "../log.ts";
import { exportedName, passesFilter } from "../manifest/names.ts";
import type { Upstream } from "../manifest/types.ts";

export const MAX_LIST_PAGES = 50;

export interface UpstreamTool {
  /** The server's own name for the tool. */
  raw: string;
  /** The name hosts see. */
  exported: string;
  tool: Tool;
}

/** Every page of `tools/list`, and the server's `ttlMs` hint from the first page (SEP-2549). */
export async function listAllTools(
  client: Client,
  server: string,
): Promise<{ tools: Tool[]; ttlMs?: number }> {
  const tools: Tool[] = [];
  let ttlMs: number | undefined;
  let cursor: string | undefined;
  for (let page = 1; page <= MAX_LIST_PAGES; page++) {
    const res = await client.listTools(cursor ? { cursor } : undefined);
    if (page === 1) ttlMs = (res as { ttlMs?: number }).ttlMs;
    tools.push(...res.tools);
    cursor = typeof res.nextCursor === "string" && res.nextCursor ? res.nextCursor : undefined;
    if (!cursor) return { tools, ttlMs };
  }
  log.warn(`mcp_servers.${server}: tools/list has more than ${MAX_LIST_PAGES} pages; the rest is ignored`);
  return { tools, ttlMs };
}

export function mapTools(tools: readonly Tool[], u: Upstream): UpstreamTool[] {
  return tools
    .filter((t) => passesFilter(t.name, { include: u.include, exclude: u.exclude }))
    .map((t) => ({ raw: t.name, exported: exportedName(t.name, u), tool: t }));
}
