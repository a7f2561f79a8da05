/**
 * The OAuth client provider of one `hermit login` run. Everything it learns — a newly registered
 * client, the PKCE verifier, the new tokens — stays in memory until the login has succeeded (the
 * code exchanged and the new token accepted by the MCP server); only then does `commit()` write
 * the client and the tokens, each atomically. A failed or cancelled login therefore leaves the
 * stored login exactly as it was (Hermes #98759 deletes it first).
 */
import { randomBytes } from "node:crypto";
import type { OAuthClientProvider, OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import type {
  OAuthClientInformationFull,
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { clientMetadataFor, configuredClient, type OAuthSettings } from "./client.ts";
import { boundIssuer, checkBoundIssuer, verifyDiscovery } from "./discovery.ts";
import type { OAuthStore } from "./store.ts";
import { toRecord } from "./store.ts";

export interface LoginProviderOptions {
  store: OAuthStore;
  serverUrl: string;
  oauth: OAuthSettings;
  redirectUrl: string;
  /** How to accept a genuine move of the authorization server ("run 'hermit logout …'"). */
  relogin: string;
  now?: () => number;
}

export class LoginOAuthProvider implements OAuthClientProvider {
  /** Set when the SDK wants the person sent to the authorization server. */
  authorizationUrl: URL | undefined;
  /** The `state` every answer must carry back (CSRF). */
  readonly expectedState = randomBytes(16).toString("base64url");
  /** The authorization server's verified issuer: an answer naming another is refused (RFC 9207). */
  issuer: string | undefined;
  /** Its metadata promises `iss` on every answer: an answer without one is refused (RFC 9207 §2.4). */
  issRequired = false;
  readonly #o: LoginProviderOptions;
  #client: OAuthClientInformationMixed | undefined;
  #tokens: OAuthTokens | undefined;
  #verifier: string | undefined;
  #ignoreStoredClient = false;

  constructor(o: LoginProviderOptions) {
    this.#o = o;
  }

  get redirectUrl(): string {
    return this.#o.redirectUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return clientMetadataFor(this.#o.oauth, this.#o.redirectUrl);
  }

  state(): string {
    return this.expectedState;
  }

  /**
   * A client registered in this run, else the configured one, else the stored one when it was
   * registered for this redirect URI; otherwise none, and the SDK registers one (RFC 7591).
   */
  #noRegistration = false;

  clientInformation(): OAuthClientInformationMixed | undefined {
    if (this.#client) return this.#client;
    const configured = configuredClient(this.#o.oauth);
    if (configured) return configured;
    if (this.#ignoreStoredClient) return undefined;
    const stored = this.#o.store.readClient() as OAuthClientInformationFull | undefined;
    return stored?.redirect_uris?.includes(this.#o.redirectUrl) ? stored : undefined;
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    // a configured client is only ever being bound to its issuer: nothing to keep
    if (info.client_id === configuredClient(this.#o.oauth)?.client_id) return;
    this.#client = info;
  }

  /** None until this run's exchange: a login always asks the person, even with a working token. */
  tokens(): OAuthTokens | undefined {
    return this.#tokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.#tokens = tokens;
  }

  /** Refuses (throws) an authorization server discovery.ts does not trust, before anything is sent to it. */
  saveDiscoveryState(state: OAuthDiscoveryState): void {
    const verified = verifyDiscovery(state, "not logging in");
    // bound: the manifest's issuer, else the one this run found first, else the stored login's
    const bound = this.#o.oauth.issuer || !this.issuer
      ? boundIssuer(this.#o.oauth.issuer, this.#o.store.readTokens()?.issuer)
      : { issuer: this.issuer, from: "login" as const };
    checkBoundIssuer(verified.issuer, bound, this.#o.relogin, "not logging in");
    this.issuer = verified.issuer;
    this.issRequired = verified.issRequired;
    this.#noRegistration = state.authorizationServerMetadata !== undefined &&
      !state.authorizationServerMetadata.registration_endpoint;
  }

  /** The authorization server offers no dynamic registration and hermit has no client of its own. */
  get needsOwnClient(): boolean {
    return this.#noRegistration && this.clientInformation() === undefined;
  }

  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }

  saveCodeVerifier(v: string): void {
    this.#verifier = v;
  }

  codeVerifier(): string {
    if (!this.#verifier) throw new Error("no login is in progress");
    return this.#verifier;
  }

  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): void {
    if (scope === "all" || scope === "client") {
      this.#client = undefined;
      this.#ignoreStoredClient = true;
    }
    if (scope === "all" || scope === "tokens") this.#tokens = undefined;
    if (scope === "all" || scope === "verifier") this.#verifier = undefined;
  }

  /** Write what this login obtained: the client (when new) first, then the tokens. */
  commit(): void {
    if (!this.#tokens) throw new Error("no tokens to store");
    const store = this.#o.store;
    if (this.#client) store.writeClient(this.#client);
    const clientId = this.clientInformation()?.client_id;
    const rec = toRecord(
      this.#tokens,
      { serverUrl: this.#o.serverUrl, clientId },
      (this.#o.now ?? Date.now)(),
    );
    store.writeTokens(rec);
  }
}
