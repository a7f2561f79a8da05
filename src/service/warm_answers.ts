/**
 * What a relay can answer before its service is up: `initialize` from the manifest (and the
 * capabilities the schema cache remembers), and `tools/list` from the command tools and the cached
 * upstream tool lists, in `exports.tools` order — only when every exported tool is known, so the
 * answer is the same one the service would give. Hosts with short start-up timeouts then never
 * wait for a service to launch. Pure over the manifest and the cache.
 */
import {
  type InitializeResult,
  LATEST_PROTOCOL_VERSION,
  type ListToolsResult,
  type ServerCapabilities,
  SUPPORTED_PROTOCOL_VERSIONS,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { safeMode } from "../gates/safe_mode.ts";
import { screenManifest } from "../gates/screen_manifest.ts";
import type { Manifest } from "../manifest/types.ts";
import { commandToolDefinition } from "../mcp/command_tool.ts";
import { upstreamToolView } from "../mcp/gateway_catalog.ts";
import type { SchemaCache } from "../mcp/schema_cache.ts";
import { serverInfo } from "../mcp/server_info.ts";
import { mapTools } from "../mcp/upstream_tools.ts";

export interface WarmAnswers {
  initialize(requestedVersion: unknown): InitializeResult;
  /** The tool list, or undefined when some exported tool is not known without the service. */
  toolsList(): ListToolsResult | undefined;
}

export function warmAnswers(
  m: Manifest,
  cache: SchemaCache | undefined,
  env: Readonly<Record<string, string | undefined>>,
): WarmAnswers {
  const off = safeMode(env);
  const refused = new Set(screenManifest(m).map((r) => r.where));
  const upstreams = Object.values(m.upstreams).filter((u) =>
    u.enabled && !refused.has(`mcp_servers.${u.name}`)
  );
  const cached = upstreams.map((u) => ({ u, entry: cache?.get(u) }));

  const capabilities = (): ServerCapabilities => {
    const caps: ServerCapabilities = {};
    if (m.exports.tools.length) caps.tools = { listChanged: true };
    for (const { u, entry } of cached) {
      const c = entry?.capabilities;
      if (!c) continue;
      if (u.resources && c.resources) {
        caps.resources = { listChanged: true, ...(c.resources.subscribe ? { subscribe: true } : {}) };
      }
      if (u.prompts && c.prompts) caps.prompts = { listChanged: true };
      if (c.logging) caps.logging = {};
      if (c.completions) caps.completions = {};
    }
    return caps;
  };

  return {
    initialize: (requested) => ({
      protocolVersion: typeof requested === "string" && SUPPORTED_PROTOCOL_VERSIONS.includes(requested)
        ? requested
        : LATEST_PROTOCOL_VERSION,
      capabilities: capabilities(),
      serverInfo: serverInfo(m),
    }),
    toolsList: () => {
      if (off) return { tools: [] };
      const known = new Map<string, Tool>();
      let twice = false;
      const add = (name: string, tool: Tool) => {
        twice ||= known.has(name) && m.exports.tools.includes(name); // the service serves neither
        known.set(name, tool);
      };
      for (const t of Object.values(m.tools)) {
        if (!refused.has(`tools.${t.name}`)) add(t.name, commandToolDefinition(t));
      }
      for (const { u, entry } of cached) {
        for (const t of entry ? mapTools(entry.tools, u) : []) {
          add(t.exported, upstreamToolView(u, t).tool);
        }
      }
      if (twice || !m.exports.tools.every((n) => known.has(n))) return undefined;
      return { tools: m.exports.tools.map((n) => known.get(n)!) };
    },
  };
}
