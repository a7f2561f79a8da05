/**
 * What an upstream offers right now: its tool list (live, or from the schema cache for a lazy
 * start), written through to the cache after every live listing, with a timer on the list's
 * `ttlMs`, and a one-line log plus a change notice when the exported set changes.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { ServerCapabilities, Tool } from "@modelcontextprotocol/sdk/types.js";
import { log } from "../log.ts";
import type { Upstream } from "../manifest/types.ts";
import { type CacheEntry, expiresAt, type SchemaCache, ttlHint } from "./schema_cache.ts";
import type { Clock } from "../platform/clock.ts";
import { TtlTimer } from "./upstream_lifecycle.ts";
import { listAllTools, mapTools, type UpstreamTool } from "./upstream_tools.ts";

/** A tool list as a server gave it, with its `ttlMs` hint. */
export interface Listed {
  tools: Tool[];
  ttlMs?: number;
}

export interface ListingHooks {
  clock: Clock;
  cache?: SchemaCache;
  /** The exported tool set changed. */
  changed(): void;
  /** The list's ttlMs ran out. */
  expired(): void;
}

export class ToolListing {
  readonly #config: Upstream;
  readonly #hooks: ListingHooks;
  readonly #ttl: TtlTimer;
  #tools: UpstreamTool[] = [];
  #fromCache = false;

  constructor(config: Upstream, hooks: ListingHooks) {
    this.#config = config;
    this.#hooks = hooks;
    this.#ttl = new TtlTimer(hooks.clock);
  }

  get tools(): readonly UpstreamTool[] {
    return this.#tools;
  }

  get fromCache(): boolean {
    return this.#fromCache;
  }

  /** A lazy start: the list from a fresh cache entry, nothing started. */
  loadCache(entry: CacheEntry): void {
    this.#tools = mapTools(entry.tools, this.#config);
    this.#fromCache = true;
    this.#arm(expiresAt(entry.written_at, entry.ttl_ms));
  }

  /** Every page of the live tool list (nothing changes here until `apply`). */
  async fetch(client: Client, capabilities: ServerCapabilities | undefined): Promise<Listed> {
    return capabilities?.tools
      ? await listAllTools(client, this.#config.name)
      : { tools: [], ttlMs: undefined };
  }

  /** Take a fetched list: write it through to the cache and follow its TTL. */
  apply(listed: Listed, meta: { capabilities?: ServerCapabilities; instructions?: string }): void {
    this.#tools = mapTools(listed.tools, this.#config);
    this.#fromCache = false;
    this.#hooks.cache?.put(this.#config, {
      tools: this.#tools.map((t) => t.tool),
      ...meta,
      ttlMs: listed.ttlMs,
    });
    this.#arm(expiresAt(this.#hooks.clock.now(), ttlHint(listed.ttlMs)));
  }

  /** Compare with an earlier list; log and notify when the exported set changed. */
  announceSince(before: readonly UpstreamTool[]): void {
    const key = (ts: readonly UpstreamTool[]) => JSON.stringify(ts.map((t) => [t.exported, t.tool]));
    if (key(before) === key(this.#tools)) return;
    const was = new Set(before.map((t) => t.exported));
    const now = new Set(this.#tools.map((t) => t.exported));
    const added = [...now].filter((n) => !was.has(n));
    const removed = [...was].filter((n) => !now.has(n));
    log.info(
      `mcp_servers.${this.#config.name}: tools changed${added.length ? "; added: " + added.join(", ") : ""}${
        removed.length ? "; removed: " + removed.join(", ") : ""
      }`,
    );
    this.#hooks.changed();
  }

  stop(): void {
    this.#ttl.clear();
  }

  /** Refresh when the list stops being fresh (`at`); undefined = never. */
  #arm(at: number | undefined): void {
    this.#ttl.arm(at, () => {
      log.info(`mcp_servers.${this.#config.name}: the tool list's ttlMs ran out; refreshing`);
      this.#hooks.expired();
    });
  }
}
