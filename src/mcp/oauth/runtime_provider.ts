/**
 * The OAuth client provider every non-interactive path uses (serve, the standalone service,
 * check, tools, call). It reads the login `hermit login` stored, re-reading the files whenever
 * they change on disk, and refreshes access tokens through the SDK. It never opens, prompts or
 * waits for anything and never registers a client: where the SDK would send a person to the
 * authorization server it fails at once with `NeedsLogin` (or `RefreshUnavailable` when a refresh
 * only failed for now). It never deletes a credential either: a refused refresh token is merely
 * not offered again, so a login written meanwhile by another process is picked up. It is also
 * what its refresh guard shares with the other processes on the same login (`SharedLogin`).
 */
import type { OAuthClientProvider, OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import type {
  OAuthClientInformationFull,
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { InterpolationContext } from "../../manifest/interpolate.ts";
import type { Upstream } from "../../manifest/types.ts";
import {
  clientMetadataFor,
  configuredClient,
  type OAuthSettings,
  resolveOAuth,
  sameIssuer,
} from "./client.ts";
import { boundIssuer, checkBoundIssuer, reloginHint, verifyDiscovery } from "./discovery.ts";
import { NeedsLogin, RefreshUnavailable } from "./errors.ts";
import { RefreshGuard, type SharedLogin } from "./refresh_guard.ts";
import { fromRecord, type OAuthStore, oauthStoreFor, toRecord } from "./store.ts";

export interface RuntimeProviderOptions {
  store: OAuthStore;
  serverUrl: string;
  oauth: OAuthSettings;
  /** For the `NeedsLogin` line. */
  server: string;
  adapterDir: string;
  /** What the refresh guard sends requests with (tests: a scripted authorization server). */
  fetch?: FetchLike;
  /** How long a refresh request may take (tests: less than `REFRESH_SEND_MS`). */
  refreshTimeoutMs?: number;
  now?: () => number;
}

export class RuntimeOAuthProvider implements OAuthClientProvider, SharedLogin {
  readonly store: OAuthStore;
  readonly guard: RefreshGuard;
  readonly #o: RuntimeProviderOptions;
  readonly #now: () => number;
  /** The authorization server discovery found in the current auth pass. */
  #issuer: string | undefined;
  /** The client file (by stamp) the authorization server refused; a new login replaces it. */
  #refusedClient: string | undefined;
  #verifier: string | undefined;
  /** Access tokens of refreshes the guard stored, or left unstored for a newer login: not saved again. */
  readonly #settled = new Set<string>();

  constructor(o: RuntimeProviderOptions) {
    this.#o = o;
    this.store = o.store;
    this.guard = new RefreshGuard(o.fetch, this, o.refreshTimeoutMs);
    this.#now = o.now ?? Date.now;
  }

  #needsLogin(why?: string): NeedsLogin {
    return new NeedsLogin(this.#o.server, this.#o.adapterDir, why);
  }

  get redirectUrl(): string {
    // Never visited: this provider stops before any redirect. It must be set, though, or the SDK
    // takes this for a client-credentials client.
    const stored = this.store.readClient() as OAuthClientInformationFull | undefined;
    return stored?.redirect_uris?.[0] ?? "http://127.0.0.1/callback";
  }

  get clientMetadata(): OAuthClientMetadata {
    return clientMetadataFor(this.#o.oauth, this.redirectUrl);
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    const configured = configuredClient(this.#o.oauth);
    if (configured) return configured;
    const stored = this.store.readClient();
    if (!stored) throw this.#needsLogin();
    if (this.#refusedClient === this.store.clientStamp()) {
      throw this.#needsLogin("the authorization server no longer accepts its client registration");
    }
    if (this.#issuer && stored.issuer && !sameIssuer(stored.issuer, this.#issuer)) {
      throw this.#needsLogin(`its authorization server is now ${this.#issuer}`);
    }
    return stored;
  }

  // No saveClientInformation: without it the SDK cannot register a client from here.

  #clientId(): string | undefined {
    return configuredClient(this.#o.oauth)?.client_id ?? this.store.readClient()?.client_id;
  }

  tokens(): OAuthTokens | undefined {
    const rec = this.store.readTokens();
    if (!rec) return undefined;
    const t = fromRecord(rec, { serverUrl: this.#o.serverUrl, clientId: this.#clientId() }, this.#now());
    if (t?.refresh_token && this.guard.refused.has(t.refresh_token)) delete t.refresh_token;
    return t;
  }

  /** After a refresh: the new tokens, keeping the refresh token when the response left it out. */
  saveTokens(tokens: OAuthTokens): void {
    if (this.#settled.has(tokens.access_token)) return; // every caller of one merged refresh
    const binding = { serverUrl: this.#o.serverUrl, clientId: this.#clientId() };
    this.store.writeTokens(toRecord(tokens, binding, this.#now(), this.store.readTokens(), true));
  }

  lockPath(): string {
    return this.store.refreshLockFile();
  }

  holderPath(): string {
    return this.store.refreshHolderFile();
  }

  stored(): boolean {
    return this.store.readTokens() !== undefined;
  }

  current(sent: string, since: number): OAuthTokens | undefined {
    const rec = this.store.readTokens();
    const t = rec && this.tokens();
    if (!rec || !t || t.expires_in === 0) return undefined;
    const rotated = t.refresh_token !== undefined && t.refresh_token !== sent;
    if (!rotated && Date.parse(rec.saved_at) < since) return undefined;
    this.#settled.add(t.access_token);
    return t;
  }

  save(sent: string, answer: OAuthTokens): void {
    const previous = this.store.readTokens();
    // a login stored meanwhile is not this refresh's to replace
    if (previous?.refresh_token === sent) this.saveTokens({ ...answer, issuer: previous.issuer });
    this.#settled.add(answer.access_token);
  }

  redirectToAuthorization(): never {
    const transient = this.guard.transientFailure;
    if (transient) throw new RefreshUnavailable(transient);
    throw this.#needsLogin();
  }

  saveCodeVerifier(v: string): void {
    this.#verifier = v; // memory only: no flow is ever finished from here
  }

  codeVerifier(): string {
    if (!this.#verifier) throw this.#needsLogin();
    return this.#verifier;
  }

  /** Refuses (throws) an authorization server discovery.ts does not trust: no refresh token goes to it. */
  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.guard.transientFailure = undefined; // a new auth pass begins
    this.#issuer = undefined; // until this pass's authorization server is verified
    const found = verifyDiscovery(state, "the stored login is not sent to it").issuer;
    checkBoundIssuer(
      found,
      boundIssuer(this.#o.oauth.issuer, this.store.readTokens()?.issuer),
      reloginHint(this.#o.adapterDir, this.#o.server),
      "not refreshing",
    );
    this.#issuer = found;
  }

  /** The SDK asks to forget credentials the server refused; hermit keeps the files (see above). */
  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): void {
    if ((scope === "all" || scope === "client") && !configuredClient(this.#o.oauth)) {
      this.#refusedClient = this.store.clientStamp();
    }
    if (scope === "all" || scope === "verifier") this.#verifier = undefined;
  }
}

export interface RuntimeAuth {
  provider: RuntimeOAuthProvider;
  fetch: FetchLike;
}

/** The provider and fetch wrapper for one `auth: oauth` upstream of an adapter. */
export function createRuntimeAuth(
  u: Upstream,
  o: {
    platform: NodeJS.Platform;
    env: Readonly<Record<string, string | undefined>>;
    adapter: string;
    adapterDir: string;
    interpolation: InterpolationContext;
  },
): RuntimeAuth {
  const { serverUrl, oauth } = resolveOAuth(u, o.interpolation);
  const provider = new RuntimeOAuthProvider({
    store: oauthStoreFor(o.adapter, u.name, o.platform, o.env),
    serverUrl,
    oauth,
    server: u.name,
    adapterDir: o.adapterDir,
  });
  return { provider, fetch: provider.guard.fetch };
}
