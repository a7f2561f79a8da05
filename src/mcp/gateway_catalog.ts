/**
 * The gateway's tool catalog over its live sources: the rules are `catalog.ts`'s (shared with the
 * relay's warm answers); this keeps the result until an upstream's tool list or hermit.lock
 * changes, scans descriptions and logs each finding once (the gateway's scan of a server's
 * instructions too), logs each collision once, and says why an exported name is missing: the
 * self-check, and its lines in the log.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { type ScanFinding, scanText, scanTool } from "../gates/scan.ts";
import type { Refusal } from "../gates/screen_manifest.ts";
import type { LockGate } from "../lock/gate.ts";
import type { Withheld } from "../lock/verdict.ts";
import { log } from "../log.ts";
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
  /** What was logged already (a finding, a collision): each is said once. */
  readonly #reported = new Set<string>();
  #memo: {
    lists: readonly (readonly unknown[])[];
    lock: number | undefined;
    entries: CatalogEntry[];
    byName: Map<string, CatalogEntry>;
  } | undefined;

  constructor(src: GatewaySources) {
    this.#src = src;
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
    for (const c of collisions) {
      const sources = c.sources.map(describeSource);
      this.#once(
        `collision:${c.name}`,
        () =>
          log.error(
            `'${c.name}' is provided by ${sources.join(" and ")}; neither is served until one is renamed`,
          ),
      );
    }
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

  /** Scan what each upstream said in `initialize.instructions` (at start, when they have answered). */
  scanInstructions(): void {
    for (const u of this.#src.upstreams.values()) {
      if (u.instructions) {
        this.#report(`mcp_servers.${u.name}`, scanText("initialize.instructions", u.instructions));
      }
    }
  }

  /** Log each scan finding about `where` once. */
  #report(where: string, findings: ScanFinding[]): void {
    for (const f of findings) {
      this.#once(
        `scan:${where}:${f.where}:${f.rule}`,
        () => log.warn(`scan: ${where} ${f.where}: ${f.rule}: "${f.excerpt}"`),
      );
    }
  }

  #once(key: string, fn: () => void): void {
    if (this.#reported.has(key)) return;
    this.#reported.add(key);
    fn();
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

  /** The self-check in the log: a warning per name not served, a line per tool not exported. */
  logSelfCheck(): void {
    const { missing, unexported } = this.selfCheck();
    for (const m of missing) {
      log.warn(`exports.tools lists '${m.name}', but it is not served: ${m.why}`, {
        kind: "not-served",
        tool: m.name,
        why: m.why,
      });
    }
    for (const u of unexported) {
      log.info(
        `mcp_servers.${u.server} offers '${u.raw}'${
          u.exported !== u.raw ? ` (as '${u.exported}')` : ""
        }, which exports.tools does not list; not reachable`,
      );
    }
  }

  /**
   * A call admitted with `admitted`, judged again once its upstream is connected and right before
   * it is sent: connecting (a lazy start, a reconnect, a recycle) lists the server's tools anew,
   * and a definition that changed since must not run on the strength of the old one (a cached
   * listing that passed hermit.lock). Withheld now, gone, or from another source: the refusal line.
   * (Whether it needs approval cannot change: trust, and what counts as read-only on an untrusted
   * server, come from the manifest, not from the server's definition.)
   */
  recheck(name: string, admitted: CatalogEntry): string | undefined {
    const now = this.find(name);
    if (now === admitted) return undefined;
    if (!now) {
      const withheld = this.withheld(name);
      return withheld
        ? `refused: ${withheld.line}`
        : `refused: '${name}' is no longer served: ${this.whyMissing(name)}`;
    }
    const [was, is] = [admitted.source, now.source];
    const same = is.kind === "upstream" && was.kind === "upstream" && is.server === was.server &&
      is.raw === was.raw;
    return same
      ? undefined
      : `refused: '${name}' is now served from elsewhere (its server restarted); call it again`;
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
export function upstreamDown(
  u: Pick<UpstreamConnection, "name" | "state" | "lastError"> & { waitingFor?: string },
): string {
  const why = u.lastError ? `: ${u.lastError}` : "";
  switch (u.state) {
    case "cooldown":
    case "stopped":
      return `mcp_servers.${u.name} could not be started${why}`;
    case "idle":
      return `mcp_servers.${u.name} has not been started`;
    case "connecting":
      return `mcp_servers.${u.name} is ${u.waitingFor ?? "still starting"}`;
    case "reconnecting":
      return `mcp_servers.${u.name} lost its connection and is reconnecting${why}`;
    default:
      return `mcp_servers.${u.name} is ${u.state}${why}`;
  }
}
