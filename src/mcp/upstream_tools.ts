/**
 * An upstream's tool list: every page (at most 50, like Hermes, so a broken cursor cannot spin;
 * the same cap for resources and prompts), filtered by the server's include/exclude on raw
 * names, and mapped to exported names. A tool whose definition nests deeper than
 * `MAX_DEFINITION_DEPTH` is left out with a warning: every gate that reads a definition walks it
 * (sanitization, the scan, the lock's hash), and one such tool would otherwise end the gateway.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { log } from "../log.ts";
import { exportedName, passesFilter } from "../manifest/names.ts";
import type { Upstream } from "../manifest/types.ts";

const MAX_LIST_PAGES = 50;
/** Levels of objects and arrays a tool definition may nest (real ones: about ten). */
export const MAX_DEFINITION_DEPTH = 100;

export interface UpstreamTool {
  /** The server's own name for the tool. */
  raw: string;
  /** The name hosts see. */
  exported: string;
  tool: Tool;
}

/**
 * Every page of a paginated list (`tools/list`, `resources/list`, …), at most `MAX_LIST_PAGES`;
 * past that a warning names `what` (e.g. `mcp_servers.x: tools/list`) and the rest is ignored.
 */
export async function listAllPages<T>(
  what: string,
  page: (cursor: string | undefined) => Promise<{ items: T[]; next?: unknown }>,
): Promise<T[]> {
  const all: T[] = [];
  let cursor: string | undefined;
  for (let n = 1; n <= MAX_LIST_PAGES; n++) {
    const r = await page(cursor);
    all.push(...r.items);
    cursor = typeof r.next === "string" && r.next ? r.next : undefined;
    if (!cursor) return all;
  }
  log.warn(`${what} has more than ${MAX_LIST_PAGES} pages; the rest is ignored`);
  return all;
}

/** Every page of `tools/list`, and the server's `ttlMs` hint from the first page (SEP-2549). */
export async function listAllTools(
  client: Client,
  server: string,
): Promise<{ tools: Tool[]; ttlMs?: number }> {
  let ttlMs: number | undefined;
  const tools = await listAllPages(`mcp_servers.${server}: tools/list`, async (cursor) => {
    const res = await client.listTools(cursor ? { cursor } : undefined);
    if (cursor === undefined) ttlMs = (res as { ttlMs?: number }).ttlMs; // the first page
    return { items: res.tools, next: res.nextCursor };
  });
  return { tools, ttlMs };
}

export function mapTools(tools: readonly Tool[], u: Upstream): UpstreamTool[] {
  return tools
    .filter((t) => passesFilter(t.name, { include: u.include, exclude: u.exclude }))
    .filter((t) => {
      if (!nestsDeeper(t, MAX_DEFINITION_DEPTH)) return true;
      log.warn(
        `mcp_servers.${u.name}: tool '${t.name}' is not served: its definition nests deeper than ${MAX_DEFINITION_DEPTH} levels`,
      );
      return false;
    })
    .map((t) => ({ raw: t.name, exported: exportedName(t.name, u), tool: t }));
}

/** Whether objects and arrays in `value` nest deeper than `limit` (walked without recursion). Pure. */
export function nestsDeeper(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (!v || typeof v !== "object") continue;
    if (depth >= limit) return true;
    for (const x of Object.values(v)) if (x && typeof x === "object") stack.push([x, depth + 1]);
  }
  return false;
}
