/**
 * What a relay can answer before its service is up: `initialize` (capabilities from the cached
 * upstream listings) and `tools/list` (the command tools and the cached upstream tools, in
 * `exports.tools` order), built by the catalog's own rules (`src/mcp/catalog.ts`: the same active
 * sources, duplicate-name rule, sanitizing and capabilities as the gateway), so the answer is the
 * one the service gives. `tools/list` is answered only when every active upstream's listing is
 * cached and every exported tool is served; otherwise it waits for the service. Hosts with short
 * start-up timeouts then never wait for a service to launch. Pure over the manifest, the cache
 * and the environment; only types come from the MCP SDK.
 */
import type { InitializeResult, ListToolsResult } from "@modelcontextprotocol/sdk/types.js";
import { safeMode } from "../gates/safe_mode.ts";
import { screenManifest } from "../gates/screen_manifest.ts";
import type { Manifest, Upstream } from "../manifest/types.ts";
import { activeSources, buildCatalog, capabilitiesOf, type CatalogSources } from "../mcp/catalog.ts";
import type { CacheEntry } from "../mcp/schema_cache.ts";
import { serverInfo } from "../mcp/server_info.ts";
import { mapTools } from "../mcp/upstream_tools.ts";

/** The MCP SDK's `LATEST_PROTOCOL_VERSION` and `SUPPORTED_PROTOCOL_VERSIONS` (a unit test holds them equal). */
export const LATEST_PROTOCOL_VERSION = "2025-11-25";
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = [
  LATEST_PROTOCOL_VERSION,
  "2025-06-18",
  "2025-03-26",
  "2024-11-05",
  "2024-10-07",
];

export interface WarmAnswers {
  initialize(requestedVersion: unknown): InitializeResult;
  /** The tool list, or undefined when it is not known without the service. */
  toolsList(): ListToolsResult | undefined;
}

export function warmAnswers(
  m: Manifest,
  cached: (u: Upstream) => CacheEntry | undefined,
  env: Readonly<Record<string, string | undefined>>,
  /** Upstream tools a gate withholds (hermit.lock), left out exactly as the gateway leaves them out. */
  withhold?: CatalogSources["withhold"],
): WarmAnswers {
  const active = activeSources(m, screenManifest(m).map((r) => r.where), safeMode(env));
  const listed = active.upstreams.map((config) => {
    const entry = cached(config);
    return {
      config,
      entry,
      tools: entry ? mapTools(entry.tools, config) : [],
      capabilities: entry?.capabilities,
    };
  });
  return {
    initialize: (requested) => ({
      // as the SDK's server negotiates: the client's version when supported, else the latest
      protocolVersion: typeof requested === "string" && SUPPORTED_PROTOCOL_VERSIONS.includes(requested)
        ? requested
        : LATEST_PROTOCOL_VERSION,
      capabilities: capabilitiesOf(m, listed),
      serverInfo: serverInfo(m),
    }),
    toolsList: () => {
      if (listed.some((u) => !u.entry)) return undefined;
      const { entries } = buildCatalog({
        exports: m.exports.tools,
        commandTools: active.commandTools,
        upstreams: listed,
        withhold,
      });
      if (entries.length !== m.exports.tools.length) return undefined;
      return { tools: entries.map((e) => e.tool) };
    },
  };
}
