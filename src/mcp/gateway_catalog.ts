/**
 * The gateway's tool catalog over its live sources: the rules are `catalog.ts`'s (shared with the
 * relay's warm answers); this keeps the result until an upstream's tool list or hermit.lock
 * changes, scans and reports descriptions once, logs collisions, and says why an exported name is
 * missing, for the self-check.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { type ScanFinding, scanTool } from "../gates/scan.ts";
import type { Refusal } from "../gates/screen_manifest.ts";
import type { LockGate } from "../lock/gate.ts";
import type { Withheld } from "../lock/verdict.ts";
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
  /** hermit.lock (gate 9): upstream tools whose definition it does not hold are withheld. */
  lock?: LockGate;
}

export class Catalog {
  readonly #src: GatewaySources;
  readonly #scanned = new Map<string, ScanFinding[]>();
  readonly #report: (where: string, findings: ScanFinding[]) => void;
  readonly #collision: (name: string, sources: string[]) => void;
  #memo: {
    lists: readonly (readonly unknown[])[];
    lock: number | undefined;
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
    const lock = this.#src.lock?.generation;
    if (
      this.#memo && lists.length === this.#memo.lists.length && lock === this.#memo.lock &&
      lists.every((l, i) => l === this.#memo!.lists[i])
    ) {
      return this.#memo.entries;
    }
    const { entries, collisions } = buildCatalog(this.#sources(), (server, tool) => this.#scan(server, tool));
    for (const c of collisions) this.#collision(c.name, c.sources.map(describeSource));
    this.#memo = { lists, lock, entries, byName: new Map(entries.map((e) => [e.name, e])) };
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
    const lock = this.#src.lock;
    return {
      exports: this.#src.manifest.exports.tools,
      commandTools: this.#src.commandTools.values(),
      upstreams: [...this.#src.upstreams.values()],
      withhold: lock ? (server, t) => lock.judge(server, t) !== undefined : undefined,
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

  /** Why an upstream tool of this name is withheld by hermit.lock, if it is. */
  withheld(name: string): Withheld | undefined {
    for (const u of this.#src.upstreams.values()) {
      const t = u.tools.find((t) => t.exported === name);
      const w = t && this.#src.lock?.judge(u.name, t);
      if (w) return w;
    }
    return undefined;
  }

  /** Why an exported name is not served. */
  whyMissing(name: string): string {
    if (this.#src.safeMode) return "safe mode is on";
    const withheld = this.withheld(name);
    if (withheld && this.sourcesOf(name).length === 0) return withheld.detail;
    const refusal = this.#src.refusals.find((r) => r.where === `tools.${name}`);
    if (refusal) return refusal.reason;
    if (this.sourcesOf(name).length > 1) return "more than one source provides it";
    const down = [...this.#src.upstreams.values()].filter((u) => u.state !== "connected");
    if (down.length) return down.map(upstreamDown).join("; ");
    return "no command tool defines it and no upstream server offers it";
  }
}

/** Why an upstream offers nothing right now, in words (its state names are for status output). */
export function upstreamDown(u: Pick<UpstreamConnection, "name" | "state" | "lastError">): string {
  const why = u.lastError ? `: ${u.lastError}` : "";
  switch (u.state) {
    case "cooldown":
    case "stopped":
      return `mcp_servers.${u.name} could not be started${why}`;
    case "idle":
      return `mcp_servers.${u.name} has not been started`;
    case "connecting":
      return `mcp_servers.${u.name} is still starting`;
    case "reconnecting":
      return `mcp_servers.${u.name} lost its connection and is reconnecting${why}`;
    default:
      return `mcp_servers.${u.name} is ${u.state}${why}`;
  }
}
