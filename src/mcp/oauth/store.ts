/**
 * OAuth credentials on disk, one directory per adapter and server:
 * `<state dir>/oauth/<adapter>/<server>/` (0700) with `tokens.json` and `client.json` (0600), and
 * the refresh lock with its holder's pid (`refresh.lock`, `refresh.pid`: refresh_guard.ts). Each
 * file is replaced atomically (temp file, fsync, rename): a reader, in this process or another,
 * sees the old file or the new one, never half of one. Nothing here deletes a credential except
 * `remove()` (`hermit logout`): a failed refresh or a failed login never costs a working login.
 *
 * A token record keeps an absolute `expires_at` (so a token that ran out while hermit was down is
 * not taken for valid), the authorization server that issued it (`issuer`), the client it was
 * issued to and the MCP server URL it is for: it is never offered to another server, and its
 * refresh token is never offered with another client.
 */
import { chmodSync, mkdirSync, readFileSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import type { OAuthClientInformationMixed, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { writeFileAtomic } from "../../platform/atomic_write.ts";
import { homeDir, stateDir } from "../../platform/paths.ts";

export interface TokenRecord {
  version: 1;
  /** The MCP server these tokens are for. */
  server_url: string;
  /** The authorization server that issued them (the SDK's binding key). */
  issuer?: string;
  client_id?: string;
  access_token: string;
  token_type: string;
  refresh_token?: string;
  scope?: string;
  id_token?: string;
  /** ISO 8601; absent when the authorization server gave no `expires_in`. */
  expires_at?: string;
  saved_at: string;
}

/** What a stored token must match to be used. */
export interface Binding {
  serverUrl: string;
  clientId?: string;
}

/**
 * Tokens as the SDK hands them over → the record to store. `carryForward` (refresh responses): a
 * response without a refresh token keeps the previous one, but only from the same authorization
 * server, client and MCP server — a refresh token never crosses to another issuer.
 */
export function toRecord(
  tokens: OAuthTokens,
  binding: Binding,
  now: number,
  previous?: TokenRecord,
  carryForward = false,
): TokenRecord {
  const sameGrant = previous !== undefined && previous.issuer === tokens.issuer &&
    previous.client_id === binding.clientId && previous.server_url === binding.serverUrl;
  const refresh = tokens.refresh_token ?? (carryForward && sameGrant ? previous.refresh_token : undefined);
  const rec: TokenRecord = {
    version: 1,
    server_url: binding.serverUrl,
    issuer: tokens.issuer,
    client_id: binding.clientId,
    access_token: tokens.access_token,
    token_type: tokens.token_type,
    refresh_token: refresh,
    scope: tokens.scope,
    id_token: tokens.id_token,
    expires_at: expiryOf(tokens.expires_in, now),
    saved_at: new Date(now).toISOString(),
  };
  return JSON.parse(JSON.stringify(rec)); // drop undefined keys
}

/** `expires_in` seconds from `now` as ISO 8601; none when absent or past what a date holds. */
function expiryOf(expiresIn: unknown, now: number): string | undefined {
  if (typeof expiresIn !== "number") return undefined;
  const at = new Date(now + expiresIn * 1000);
  return Number.isNaN(at.getTime()) ? undefined : at.toISOString();
}

/** Milliseconds since the epoch when the access token runs out; NaN (expired) when unreadable. */
export function expiresAtMs(rec: TokenRecord): number | undefined {
  return rec.expires_at === undefined ? undefined : Date.parse(rec.expires_at);
}

/**
 * A stored record → what the SDK may use now: nothing for another MCP server; `expires_in`
 * rebased on `now` (0 once expired); the refresh token only with the client it was issued to.
 */
export function fromRecord(rec: TokenRecord, binding: Binding, now: number): OAuthTokens | undefined {
  if (rec.server_url !== binding.serverUrl) return undefined;
  const exp = expiresAtMs(rec);
  const out: OAuthTokens = { access_token: rec.access_token, token_type: rec.token_type };
  if (exp !== undefined) out.expires_in = Number.isNaN(exp) ? 0 : Math.max(0, Math.floor((exp - now) / 1000));
  if (rec.scope !== undefined) out.scope = rec.scope;
  if (rec.id_token !== undefined) out.id_token = rec.id_token;
  if (rec.refresh_token !== undefined && rec.client_id === binding.clientId) {
    out.refresh_token = rec.refresh_token;
  }
  if (rec.issuer !== undefined) out.issuer = rec.issuer;
  return out;
}

/** A name that is safe as one path segment. */
function segment(name: string): string {
  const s = name.replace(/[^A-Za-z0-9_-]/g, "_");
  return s === "" ? "_" : s;
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return undefined; // missing or unreadable: treated as absent, never deleted
  }
}

function isTokenRecord(v: unknown): v is TokenRecord {
  const r = v as TokenRecord | undefined;
  return !!r && typeof r === "object" && typeof r.access_token === "string" &&
    typeof r.token_type === "string" && typeof r.server_url === "string";
}

function fileKey(file: string): string {
  try {
    const s = statSync(file);
    return `${s.ino}:${s.size}:${s.mtimeMs}`;
  } catch {
    return "none";
  }
}

/** The store of `adapter`'s `server` in hermit's state directory, as `env` places it. */
export function oauthStoreFor(
  adapter: string,
  server: string,
  platform: NodeJS.Platform,
  env: Readonly<Record<string, string | undefined>>,
): OAuthStore {
  return new OAuthStore(stateDir(platform, env, homeDir(env)), adapter, server);
}

export class OAuthStore {
  /** `<state dir>/oauth`. */
  readonly root: string;
  /** `<root>/<adapter>/<server>`. */
  readonly dir: string;
  readonly tokensFile: string;
  readonly clientFile: string;
  readonly #cache = new Map<string, { key: string; value: unknown }>();

  constructor(stateDir: string, adapter: string, server: string) {
    this.root = path.join(stateDir, "oauth");
    this.dir = path.join(this.root, segment(adapter), segment(server));
    this.tokensFile = path.join(this.dir, "tokens.json");
    this.clientFile = path.join(this.dir, "client.json");
  }

  /** Identifies the current tokens file (changes whenever it is replaced); "none" when absent. */
  stamp(): string {
    return fileKey(this.tokensFile);
  }

  /** Identifies the current client file, like `stamp()`. */
  clientStamp(): string {
    return fileKey(this.clientFile);
  }

  /** A JSON file, re-read only when it changed (another process may replace it at any time). */
  #read(file: string): unknown {
    const key = fileKey(file);
    const hit = this.#cache.get(file);
    if (hit?.key === key) return hit.value;
    const value = key === "none" ? undefined : readJson(file);
    this.#cache.set(file, { key, value });
    return value;
  }

  readTokens(): TokenRecord | undefined {
    const v = this.#read(this.tokensFile);
    return isTokenRecord(v) ? { ...v } : undefined;
  }

  writeTokens(rec: TokenRecord): void {
    this.#ensureDir();
    writeFileAtomic(this.tokensFile, JSON.stringify(rec, null, 2) + "\n");
  }

  readClient(): OAuthClientInformationMixed | undefined {
    const v = this.#read(this.clientFile) as OAuthClientInformationMixed | undefined;
    return v && typeof v === "object" && typeof v.client_id === "string" ? { ...v } : undefined;
  }

  writeClient(info: OAuthClientInformationMixed): void {
    this.#ensureDir();
    writeFileAtomic(this.clientFile, JSON.stringify(info, null, 2) + "\n");
  }

  /**
   * The lock file a refresh of this login holds. Its directory is not made: a refresh is only
   * for a stored login, and one removed by `hermit logout` must not come back as an empty folder.
   */
  refreshLockFile(): string {
    return path.join(this.dir, "refresh.lock");
  }

  /** Where the refresh holding the lock notes its pid (for the messages of those waiting). */
  refreshHolderFile(): string {
    return path.join(this.dir, "refresh.pid");
  }

  /** Forget this server's login (`hermit logout`). True when there was something to remove. */
  remove(): boolean {
    let existed = true;
    try {
      statSync(this.dir);
    } catch {
      existed = false;
    }
    rmSync(this.dir, { recursive: true, force: true });
    this.#cache.clear();
    return existed;
  }

  /** The directory and its two parents under the state dir, each 0700 whatever the umask. */
  #ensureDir(): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    if (process.platform === "win32") return;
    for (const d of [this.root, path.dirname(this.dir), this.dir]) chmodSync(d, 0o700);
  }
}
