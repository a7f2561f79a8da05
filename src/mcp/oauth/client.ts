/**
 * What hermit says about itself as an OAuth client, shared by the login flow and the
 * non-interactive provider: its registration metadata (a public, native client with a loopback
 * redirect, RFC 8252), a client configured in the manifest (`oauth.client_id`), and the
 * `oauth:` settings after interpolation.
 */
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { interpolate, type InterpolationContext } from "../../manifest/interpolate.ts";
import type { Upstream } from "../../manifest/types.ts";
import { VERSION } from "../../version.ts";

export type OAuthSettings = Upstream["oauth"];

/** The server URL and `oauth:` settings with `${…}` resolved, as a connection uses them. */
export function resolveOAuth(
  u: Upstream,
  ctx: InterpolationContext,
): { serverUrl: string; oauth: OAuthSettings } {
  const { value } = interpolate({ url: u.url ?? "", oauth: u.oauth }, ctx);
  return { serverUrl: value.url, oauth: value.oauth };
}

export function clientMetadataFor(oauth: OAuthSettings, redirectUrl: string): OAuthClientMetadata {
  return {
    client_name: oauth.clientName ?? "hermit",
    redirect_uris: [redirectUrl],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: oauth.clientSecret ? "client_secret_post" : "none",
    scope: oauth.scope,
    software_id: "hermit",
    software_version: VERSION,
  };
}

/** `oauth.client_id` (and secret) from the manifest: never registered, never written to disk. */
export function configuredClient(oauth: OAuthSettings): OAuthClientInformationMixed | undefined {
  if (!oauth.clientId) return undefined;
  return oauth.clientSecret
    ? { client_id: oauth.clientId, client_secret: oauth.clientSecret }
    : { client_id: oauth.clientId };
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;

/**
 * An issuer after RFC 3986 §6.2.2–6.2.3 normalisation: scheme and host in lower case, the default
 * port dropped, an empty path as `/`, dot segments removed, percent-encodings in upper case and
 * those of unreserved characters decoded. Anything else (path case, a trailing slash on a path,
 * query) still tells issuers apart. Not a URL: the string itself.
 */
export function normalIssuer(issuer: string): string {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return issuer;
  }
  return url.href.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => {
    const c = String.fromCharCode(parseInt(hex, 16));
    return UNRESERVED.test(c) ? c : `%${hex.toUpperCase()}`;
  });
}

/** Authorization server URLs compare equal after RFC 3986 normalisation (`normalIssuer`), not looser. */
export function sameIssuer(a: string, b: string): boolean {
  return normalIssuer(a) === normalIssuer(b);
}
