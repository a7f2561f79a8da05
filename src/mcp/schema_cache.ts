/**
 * The schema cache: what each upstream last listed (tools, capabilities, instructions), so a
 * `lazy: true` upstream can answer `tools/list` without being started. One file per entry in
 * `<state dir>/schema-cache/<fingerprint>.json`, mode 0600 in a 0700 directory, each replaced atomically, keyed by a 16-hex
 * fingerprint of the connection-defining config (command, args, url, transport and the sorted
 * include/exclude filters, as written: never credentials, so rotating a token keeps the cache)
 * and, for a stdio server, the directory it runs in (the adapter's, or its `cwd` there): two
 * adapters' `node server.mjs` are two servers.
 * The server's `ttlMs` freshness hint is honoured (one under a second counts as a second);
 * `ttlMs: 0` or none means "no hint": the entry stays valid until the config changes or a live
 * listing replaces it (Hermes's #101007).
 */
import { chmodSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import type { ServerCapabilities, Tool } from "@modelcontextprotocol/sdk/types.js";
import { log } from "../log.ts";
import { writeFileAtomic } from "../platform/atomic_write.ts";
import { homeDir, stateDir } from "../platform/paths.ts";
import type { Upstream } from "../manifest/types.ts";
import { sha256Hex } from "../platform/sha256.ts";

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
  u: Pick<Upstream, "command" | "args" | "url" | "kind" | "include" | "exclude" | "cwd">,
  adapterDir?: string,
): string {
  const payload = {
    dir: u.kind === "stdio" && adapterDir !== undefined ? path.resolve(adapterDir, u.cwd ?? ".") : null,
    command: u.command ?? null,
    args: u.args ?? [],
    url: u.url ?? null,
    transport: u.kind,
    tools_include: [...(u.include ?? [])].sort(),
    tools_exclude: [...(u.exclude ?? [])].sort(),
  };
  return sha256Hex(JSON.stringify(payload)).slice(0, 16);
}

/**
 * The shortest freshness hermit takes from a server: a list re-listed more often than once a
 * second gains a host nothing, and `ttlMs: 1` would cost a shared service a listing, a log line
 * and a cache write a millisecond.
 */
export const MIN_TTL_MS = 1000;

/** A `ttlMs` as servers send it: only a positive finite number is a hint, and it is at least `MIN_TTL_MS`. */
export function ttlHint(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value > 0
    ? Math.max(value, MIN_TTL_MS)
    : undefined;
}

/** When a listing taken at `listedAt` with the hint `ttlMs` stops being fresh; undefined = never. */
export function expiresAt(listedAt: number, ttlMs: number | undefined): number | undefined {
  const ttl = ttlHint(ttlMs);
  return ttl ? listedAt + ttl : undefined;
}

/** The cache of the adapter in `adapterDir`, in hermit's state directory (`HERMIT_HOME`, else the platform's). */
export function defaultSchemaCache(
  adapterDir: string,
  platform: NodeJS.Platform = process.platform,
  env: Readonly<Record<string, string | undefined>> = process.env,
): SchemaCache {
  return new SchemaCache(
    path.join(stateDir(platform, env, homeDir(env)), "schema-cache"),
    Date.now,
    adapterDir,
  );
}

export class SchemaCache {
  readonly dir: string;
  readonly #now: () => number;
  readonly #adapterDir: string | undefined;

  /** `adapterDir`: where the adapter's stdio servers run (part of their fingerprint). */
  constructor(dir: string, now: () => number = Date.now, adapterDir?: string) {
    this.dir = dir;
    this.#now = now;
    this.#adapterDir = adapterDir;
  }

  #file(fp: string): string {
    return path.join(this.dir, `${fp}.json`);
  }

  /** The stored entry whatever its age, or undefined. */
  read(u: Upstream): CacheEntry | undefined {
    const fp = fingerprint(u, this.#adapterDir);
    try {
      const entry = JSON.parse(readFileSync(this.#file(fp), "utf8")) as CacheEntry;
      return entry.fingerprint === fp && Array.isArray(entry.tools) ? entry : undefined;
    } catch {
      return undefined;
    }
  }

  isFresh(entry: CacheEntry): boolean {
    const at = expiresAt(entry.written_at, entry.ttl_ms);
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
      fingerprint: fingerprint(u, this.#adapterDir),
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
      writeFileAtomic(this.#file(entry.fingerprint), JSON.stringify(entry));
    } catch (err) {
      log.debug(`schema cache: cannot write ${this.dir}: ${(err as Error).message}`);
    }
    return entry;
  }
}
