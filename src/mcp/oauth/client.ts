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

/** Authorization server URLs compare equal up to a trailing slash. */
export function sameIssuer(a: string, b: string): boolean {
  return a.replace(/\/+$/, "") === b.replace(/\/+$/, "");
}
