/**
 * The schema cache: what each upstream last listed (tools, capabilities, instructions), so a
 * `lazy: true` upstream can answer `tools/list` without being started. One file per entry in
 * `<state dir>/schema-cache/<fingerprint>.json`, mode 0600 in a 0700 directory, keyed by a 16-hex
 * fingerprint of the connection-defining config (command, args, url, transport and the sorted
 * include/exclude filters, as written: never credentials, so rotating a token keeps the cache).
 * The server's `ttlMs` freshness hint is honoured; `ttlMs: 0` or none means "no hint": the entry
 * stays valid until the config changes or a live listing replaces it (Hermes's #101007).
 */
import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import type { ServerCapabilities, Tool } from "@modelcontextprotocol/sdk/types.js";
import { log } from "../log.ts";
import { homeDir, stateDir } from "../platform/paths.ts";
import type { Upstream } from "../manifest/types.ts";

export interface CacheEntry {
  fingerprint: string;
  server: string;
  tools: Tool[];
  capabilities?: ServerCapabilities;
  instructions?: string;
  /** The server's freshness hint; absent when it gave none (or gave 0). */
  ttl_ms?: number;
  written_at: number;
}

export interface Listing {
  tools: Tool[];
  capabilities?: ServerCapabilities;
  instructions?: string;
  ttlMs?: number;
}

export function fingerprint(
  u: Pick<Upstream, "command" | "args" | "url" | "kind" | "include" | "exclude">,
): string {
  const payload = {
    command: u.command ?? null,
    args: u.args ?? [],
    url: u.url ?? null,
    transport: u.kind,
    tools_include: [...(u.include ?? [])].sort(),
    tools_exclude: [...(u.exclude ?? [])].sort(),
  };
  return createHash("sha256").update(JSON.stringify(payload)).digest("hex").slice(0, 16);
}

/** A `ttlMs` as servers send it: only a positive finite number is a hint. */
export function ttlHint(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : undefined;
}

/** The cache in hermit's state directory (`HERMIT_HOME`, else the platform's). */
export function defaultSchemaCache(
  platform: NodeJS.Platform = process.platform,
  env: Readonly<Record<string, string | undefined>> = process.env,
): SchemaCache {
  return new SchemaCache(path.join(stateDir(platform, env, homeDir()), "schema-cache"));
}

export class SchemaCache {
  readonly dir: string;
  readonly #now: () => number;

  constructor(dir: string, now: () => number = Date.now) {
    this.dir = dir;
    this.#now = now;
  }

  #file(fp: string): string {
    return path.join(this.dir, `${fp}.json`);
  }

  /** The stored entry whatever its age, or undefined. */
  read(u: Upstream): CacheEntry | undefined {
    const fp = fingerprint(u);
    try {
      const entry = JSON.parse(readFileSync(this.#file(fp), "utf8")) as CacheEntry;
      return entry.fingerprint === fp && Array.isArray(entry.tools) ? entry : undefined;
    } catch {
      return undefined;
    }
  }

  /** When the entry stops being fresh; undefined = never (no hint). */
  expiresAt(entry: CacheEntry): number | undefined {
    return entry.ttl_ms ? entry.written_at + entry.ttl_ms : undefined;
  }

  isFresh(entry: CacheEntry): boolean {
    const at = this.expiresAt(entry);
    return at === undefined || this.#now() < at;
  }

  /** A fresh entry for `u`, or undefined. */
  get(u: Upstream): CacheEntry | undefined {
    const entry = this.read(u);
    return entry && this.isFresh(entry) ? entry : undefined;
  }

  /** Write through after a live listing. An identical entry without a TTL is not rewritten. */
  put(u: Upstream, listing: Listing): CacheEntry {
    const entry: CacheEntry = {
      fingerprint: fingerprint(u),
      server: u.name,
      tools: listing.tools,
      capabilities: listing.capabilities,
      instructions: listing.instructions,
      ttl_ms: ttlHint(listing.ttlMs),
      written_at: this.#now(),
    };
    const old = this.read(u);
    const same = old && !entry.ttl_ms &&
      JSON.stringify([old.tools, old.capabilities, old.instructions, old.ttl_ms]) ===
        JSON.stringify([entry.tools, entry.capabilities, entry.instructions, entry.ttl_ms]);
    if (same) return old;
    try {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      chmodSync(this.dir, 0o700);
      const tmp = `${this.#file(entry.fingerprint)}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify(entry), { mode: 0o600 });
      renameSync(tmp, this.#file(entry.fingerprint));
    } catch (err) {
      log.debug(`schema cache: cannot write ${this.dir}: ${(err as Error).message}`);
    }
    return entry;
  }
}
