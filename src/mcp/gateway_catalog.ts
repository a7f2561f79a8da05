/**
 * The gateway's tool catalog: for each name in `exports.tools` (in that order) the one thing that
 * provides it right now — a command tool or an upstream tool after its filter and rename — with
 * its trust, read-only flag and description-scan findings. Names provided twice are served by
 * neither (fail closed). Also why an exported name is missing, for the self-check.
 */
import type { ServerCapabilities, Tool } from "@modelcontextprotocol/sdk/types.js";
import { sanitizeValue } from "../gates/sanitize.ts";
import { type ScanFinding, scanTool } from "../gates/scan.ts";
import type { Refusal } from "../gates/screen_manifest.ts";
import { believedReadOnly, presentTool } from "../gates/trust.ts";
import { matchesAny } from "../manifest/names.ts";
import type { CommandTool, Manifest, Trust, Upstream } from "../manifest/types.ts";
import { commandToolDefinition } from "./command_tool.ts";
import type { UpstreamConnection } from "./upstream.ts";
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

/**
 * An upstream tool as hosts see it: hidden characters and reserved `_meta` gone (gate 4), its
 * exported name, and `readOnlyHint` saying what hermit believes (gate 5). The gateway's catalog
 * and the relay's warm answers both build tools with it.
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

export interface SelfCheck {
  missing: { name: string; why: string }[];
  unexported: { server: string; raw: string; exported: string }[];
}

/** What a session server advertises: each capability only when something backs it. */
export function capabilitiesOf(m: Manifest, upstreams: Iterable<UpstreamConnection>): ServerCapabilities {
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

export interface CatalogSources {
  manifest: Manifest;
  commandTools: ReadonlyMap<string, CommandTool>;
  upstreams: ReadonlyMap<string, UpstreamConnection>;
  refusals: readonly Refusal[];
  safeMode: boolean;
}

export class Catalog {
  readonly #src: CatalogSources;
  readonly #scanned = new Map<string, ScanFinding[]>();
  readonly #report: (where: string, findings: ScanFinding[]) => void;
  readonly #collision: (name: string, sources: string[]) => void;
  #memo: {
    lists: readonly (readonly unknown[])[];
    entries: CatalogEntry[];
    byName: Map<string, CatalogEntry>;
  } | undefined;

  constructor(
    src: CatalogSources,
    report: (where: string, findings: ScanFinding[]) => void,
    collision: (name: string, sources: string[]) => void,
  ) {
    this.#src = src;
    this.#report = report;
    this.#collision = collision;
  }

  /**
   * The catalog, rebuilt only when some upstream's tool list changed (each list is replaced, never
   * mutated, so comparing the lists themselves tells): calls look it up on the hot path.
   */
  entries(): CatalogEntry[] {
    const lists = [...this.#src.upstreams.values()].map((u) => u.tools);
    if (
      this.#memo && lists.length === this.#memo.lists.length &&
      lists.every((l, i) => l === this.#memo!.lists[i])
    ) {
      return this.#memo.entries;
    }
    const entries: CatalogEntry[] = [];
    for (const name of this.#src.manifest.exports.tools) {
      const found = this.sourcesOf(name);
      if (found.length === 1) entries.push(found[0]);
      else if (found.length > 1) this.#collision(name, found.map(describe));
    }
    this.#memo = { lists, entries, byName: new Map(entries.map((e) => [e.name, e])) };
    return entries;
  }

  find(name: string): CatalogEntry | undefined {
    this.entries();
    return this.#memo!.byName.get(name);
  }

  sourcesOf(name: string): CatalogEntry[] {
    const found: CatalogEntry[] = [];
    const cmd = this.#src.commandTools.get(name);
    if (cmd) {
      found.push({
        name,
        tool: commandToolDefinition(cmd),
        source: { kind: "command", tool: cmd },
        readOnly: cmd.readOnly,
        claimsReadOnly: cmd.readOnly,
        trust: "full",
        findings: [],
      });
    }
    for (const u of this.#src.upstreams.values()) {
      for (const t of u.tools) {
        if (t.exported !== name) continue;
        found.push({
          name,
          ...upstreamToolView(u.config, t),
          source: { kind: "upstream", server: u.name, raw: t.raw },
          trust: u.config.trust,
          findings: this.#scan(u.name, t.tool),
        });
      }
    }
    return found;
  }

  #scan(server: string, tool: Tool): ScanFinding[] {
    const key = `${server}\u0000${JSON.stringify(tool)}`;
    let findings = this.#scanned.get(key);
    if (!findings) {
      findings = scanTool(tool);
      this.#scanned.set(key, findings);
      this.#report(`mcp_servers.${server}`, findings);
    }
    return findings;
  }

  /** Names exported but not provided, and upstream tools offered but not exported. */
  selfCheck(): SelfCheck {
    const served = new Set(this.entries().map((e) => e.name));
    const exported = new Set(this.#src.manifest.exports.tools);
    return {
      missing: this.#src.manifest.exports.tools.filter((n) => !served.has(n)).map((name) => ({
        name,
        why: this.whyMissing(name),
      })),
      unexported: [...this.#src.upstreams.values()].flatMap((u) =>
        u.tools.filter((t) => !exported.has(t.exported)).map((t) => ({
          server: u.name,
          raw: t.raw,
          exported: t.exported,
        }))
      ),
    };
  }

  /** Why an exported name is not served. */
  whyMissing(name: string): string {
    if (this.#src.safeMode) return "safe mode is on";
    const refusal = this.#src.refusals.find((r) => r.where === `tools.${name}`);
    if (refusal) return refusal.reason;
    if (this.sourcesOf(name).length > 1) return "more than one source provides it";
    const down = [...this.#src.upstreams.values()].filter((u) => u.state !== "connected");
    if (down.length) {
      return `not offered by a running server; ${
        down.map((u) => `mcp_servers.${u.name} is ${u.state}${u.lastError ? ` (${u.lastError})` : ""}`).join(
          "; ",
        )
      }`;
    }
    return "no command tool defines it and no upstream server offers it";
  }
}

function describe(e: CatalogEntry): string {
  return e.source.kind === "command"
    ? `tools.${e.name}`
    : `mcp_servers.${e.source.server} ('${e.source.raw}')`;
}
