/**
 * The catalog, as pure functions: what hosts are offered for an adapter. Which sources run (none
 * in safe mode; the enabled upstreams and the command tools screening did not refuse), the tools
 * (exactly `exports.tools`, in that order, each from the one source that provides it: a name
 * provided twice is served by neither, fail closed) and the server capabilities (each only when
 * something backs it). One set of rules for the gateway (live listings) and for the relay's warm
 * answers (cached listings), so the two cannot drift. Only types come from the MCP SDK: the lean
 * relay loads this without the SDK or zod.
 */
import type { ServerCapabilities, Tool } from "@modelcontextprotocol/sdk/types.js";
import { sanitizeValue } from "../gates/sanitize.ts";
import type { ScanFinding } from "../gates/scan.ts";
import { believedReadOnly, presentTool } from "../gates/trust.ts";
import { matchesAny } from "../manifest/names.ts";
import type { CommandTool, Manifest, Trust, Upstream } from "../manifest/types.ts";
import type { UpstreamTool } from "./upstream_tools.ts";

export interface CatalogEntry {
  name: string;
  tool: Tool;
  source: { kind: "command"; tool: CommandTool } | { kind: "upstream"; server: string; raw: string };
  /** What hermit believes (gate 5): approvals, retries and what hosts are shown follow it. */
  readOnly: boolean;
  /** What the server itself claims (`readOnlyHint: true`), shown by `hermit tools`, not believed. */
  claimsReadOnly: boolean;
  trust: Trust;
  findings: ScanFinding[];
}

/** An upstream as the catalog sees it: its config, its (filtered, renamed) tools, its capabilities. */
export interface ListedUpstream {
  config: Upstream;
  tools: readonly UpstreamTool[];
  capabilities?: ServerCapabilities;
}

export interface CatalogSources {
  exports: readonly string[];
  commandTools: Iterable<CommandTool>;
  upstreams: Iterable<ListedUpstream>;
  /** An upstream tool a gate withholds (e.g. one whose definition a lock does not hold): not a source. */
  withhold?: (server: string, t: UpstreamTool) => boolean;
}

/** A name more than one source provides: served by none of them. */
export interface Collision {
  name: string;
  sources: CatalogEntry[];
}

/** Scan findings for an upstream tool's description (the gateway scans and reports; warm answers skip it). */
export type FindingsOf = (server: string, tool: Tool) => ScanFinding[];
const noFindings: FindingsOf = () => [];

/** The MCP definition a host sees for a command tool. */
export function commandToolDefinition(t: CommandTool): Tool {
  const annotations: NonNullable<Tool["annotations"]> = { readOnlyHint: t.readOnly };
  if (t.title) annotations.title = t.title;
  if (t.destructive !== undefined) annotations.destructiveHint = t.destructive;
  if (t.idempotent !== undefined) annotations.idempotentHint = t.idempotent;
  if (t.openWorld !== undefined) annotations.openWorldHint = t.openWorld;
  const tool: Tool = {
    name: t.name,
    description: t.description,
    inputSchema: t.inputSchema as Tool["inputSchema"],
    annotations,
  };
  if (t.title) tool.title = t.title;
  if (t.outputSchema) tool.outputSchema = t.outputSchema as Tool["outputSchema"];
  return tool;
}

/**
 * What a gateway runs for `m`: nothing in safe mode; otherwise the enabled upstreams and the command
 * tools that screening did not refuse (`refused` holds `Refusal.where`: `mcp_servers.X`, `tools.Y`).
 */
export function activeSources(
  m: Manifest,
  refused: Iterable<string>,
  safeMode: boolean,
): { upstreams: Upstream[]; commandTools: CommandTool[] } {
  if (safeMode) return { upstreams: [], commandTools: [] };
  const no = new Set(refused);
  return {
    upstreams: Object.values(m.upstreams).filter((u) => u.enabled && !no.has(`mcp_servers.${u.name}`)),
    commandTools: Object.values(m.tools).filter((t) => !no.has(`tools.${t.name}`)),
  };
}

function commandEntry(t: CommandTool): CatalogEntry {
  return {
    name: t.name,
    tool: commandToolDefinition(t),
    source: { kind: "command", tool: t },
    readOnly: t.readOnly,
    claimsReadOnly: t.readOnly,
    trust: "full",
    findings: [],
  };
}

/**
 * An upstream tool as hosts see it: hidden characters and reserved `_meta` gone (gate 4), its
 * exported name, and `readOnlyHint` saying what hermit believes (gate 5).
 */
export function upstreamToolView(
  u: Upstream,
  t: UpstreamTool,
): { tool: Tool; readOnly: boolean; claimsReadOnly: boolean } {
  const hint = t.tool.annotations?.readOnlyHint;
  const readOnly = believedReadOnly({ trust: u.trust, declared: matchesAny(t.raw, u.readOnlyTools), hint });
  return {
    tool: presentTool(sanitizeValue({ ...t.tool, name: t.exported }) as Tool, readOnly),
    readOnly,
    claimsReadOnly: hint === true,
  };
}

function upstreamEntry(u: ListedUpstream, t: UpstreamTool, findingsOf: FindingsOf): CatalogEntry {
  return {
    name: t.exported,
    ...upstreamToolView(u.config, t),
    source: { kind: "upstream", server: u.config.name, raw: t.raw },
    trust: u.config.trust,
    findings: findingsOf(u.config.name, t.tool),
  };
}

/** Every source that provides `name` (one entry each; more than one is a collision). */
export function sourcesOf(src: CatalogSources, name: string, findingsOf = noFindings): CatalogEntry[] {
  const found: CatalogEntry[] = [];
  for (const t of src.commandTools) if (t.name === name) found.push(commandEntry(t));
  for (const u of src.upstreams) {
    for (const t of u.tools) {
      if (t.exported === name && !src.withhold?.(u.config.name, t)) {
        found.push(upstreamEntry(u, t, findingsOf));
      }
    }
  }
  return found;
}

/**
 * The tools hosts are offered: for each exported name (in `exports` order) the one source that
 * provides it; names with no source are left out, names with several are left out and reported.
 */
export function buildCatalog(
  src: CatalogSources,
  findingsOf = noFindings,
): { entries: CatalogEntry[]; collisions: Collision[] } {
  const exported = new Set(src.exports);
  const byName = new Map<string, CatalogEntry[]>();
  const add = (e: CatalogEntry) => {
    const list = byName.get(e.name);
    if (list) list.push(e);
    else byName.set(e.name, [e]);
  };
  for (const t of src.commandTools) if (exported.has(t.name)) add(commandEntry(t));
  for (const u of src.upstreams) {
    for (const t of u.tools) {
      if (exported.has(t.exported) && !src.withhold?.(u.config.name, t)) add(upstreamEntry(u, t, findingsOf));
    }
  }
  const entries: CatalogEntry[] = [];
  const collisions: Collision[] = [];
  for (const name of src.exports) {
    const found = byName.get(name);
    if (!found) continue;
    if (found.length === 1) entries.push(found[0]);
    else collisions.push({ name, sources: found });
  }
  return { entries, collisions };
}

/** What a session server advertises: each capability only when some running upstream backs it. */
export function capabilitiesOf(
  m: { exports: { tools: readonly string[] } },
  upstreams: Iterable<{ config: Pick<Upstream, "resources" | "prompts">; capabilities?: ServerCapabilities }>,
): ServerCapabilities {
  const ups = [...upstreams];
  const caps: ServerCapabilities = {};
  if (m.exports.tools.length > 0) caps.tools = { listChanged: true };
  if (ups.some((u) => u.config.resources && u.capabilities?.resources)) {
    const subscribe = ups.some((u) => u.config.resources && u.capabilities?.resources?.subscribe);
    caps.resources = subscribe ? { listChanged: true, subscribe: true } : { listChanged: true };
  }
  if (ups.some((u) => u.config.prompts && u.capabilities?.prompts)) caps.prompts = { listChanged: true };
  if (ups.some((u) => u.capabilities?.logging)) caps.logging = {};
  if (ups.some((u) => u.capabilities?.completions)) caps.completions = {};
  return caps;
}

/** A source as messages name it: `tools.X` or `mcp_servers.S ('raw')`. */
export function describeSource(e: CatalogEntry): string {
  return e.source.kind === "command"
    ? `tools.${e.name}`
    : `mcp_servers.${e.source.server} ('${e.source.raw}')`;
}
