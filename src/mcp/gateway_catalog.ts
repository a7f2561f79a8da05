/**
 * The gateway's tool catalog over its live sources: the rules are `catalog.ts`'s (shared with the
 * relay's warm answers); this keeps the result until an upstream's tool list changes, scans and
 * reports descriptions once, logs collisions, and says why an exported name is missing, for the
 * self-check.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { type ScanFinding, scanTool } from "../gates/scan.ts";
import type { Refusal } from "../gates/screen_manifest.ts";
import type { CommandTool, Manifest } from "../manifest/types.ts";
import {
  buildCatalog,
  type CatalogEntry,
  type CatalogSources,
  describeSource,
  sourcesOf,
} from "./catalog.ts";
import type { UpstreamConnection } from "./upstream.ts";

export { capabilitiesOf, type CatalogEntry } from "./catalog.ts";

export interface SelfCheck {
  missing: { name: string; why: string }[];
  unexported: { server: string; raw: string; exported: string }[];
}

export interface GatewaySources {
  manifest: Manifest;
  commandTools: ReadonlyMap<string, CommandTool>;
  upstreams: ReadonlyMap<string, UpstreamConnection>;
  refusals: readonly Refusal[];
  safeMode: boolean;
}

export class Catalog {
  readonly #src: GatewaySources;
  readonly #scanned = new Map<string, ScanFinding[]>();
  readonly #report: (where: string, findings: ScanFinding[]) => void;
  readonly #collision: (name: string, sources: string[]) => void;
  #memo: {
    lists: readonly (readonly unknown[])[];
    entries: CatalogEntry[];
    byName: Map<string, CatalogEntry>;
  } | undefined;

  constructor(
    src: GatewaySources,
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
    const { entries, collisions } = buildCatalog(this.#sources(), (server, tool) => this.#scan(server, tool));
    for (const c of collisions) this.#collision(c.name, c.sources.map(describeSource));
    this.#memo = { lists, entries, byName: new Map(entries.map((e) => [e.name, e])) };
    return entries;
  }

  find(name: string): CatalogEntry | undefined {
    this.entries();
    return this.#memo!.byName.get(name);
  }

  sourcesOf(name: string): CatalogEntry[] {
    return sourcesOf(this.#sources(), name, (server, tool) => this.#scan(server, tool));
  }

  #sources(): CatalogSources {
    return {
      exports: this.#src.manifest.exports.tools,
      commandTools: this.#src.commandTools.values(),
      upstreams: [...this.#src.upstreams.values()],
    };
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
