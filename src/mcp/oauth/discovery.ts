/**
 * What hermit checks of the authorization server discovery found before sending it anything (a
 * code, a PKCE verifier, a refresh token). Its metadata must name as `issuer` the URL it was
 * discovered at (RFC 8414 §3.3, after RFC 3986 normalisation: `discoveredAs`; the SDK does not
 * check): that verified issuer is what an answer's `iss` is compared with (RFC 9207). The issuer
 * and the endpoints hermit uses must be https, or http on loopback (127.0.0.0/8, ::1, localhost)
 * — an http endpoint only for a loopback issuer (OAuth 2.1 §1.5, the MCP authorization spec). An
 * https endpoint may be on another origin than the issuer: the verified issuer vouches for it
 * over https, and real providers do this (Google's token endpoint is on oauth2.googleapis.com,
 * Cognito's endpoints on amazoncognito.com). And it must be the issuer the login is bound to
 * (`oauth.issuer`, else the stored login's): a client secret, a code or a refresh token never goes
 * to another one the MCP server's metadata names.
 */
import type { OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import { isLoopback } from "../../gates/loopback.ts";
import { shellQuote } from "../../platform/shell_quote.ts";
import { normalIssuer } from "./client.ts";

/** The authorization server discovery found is not one hermit sends credentials to. */
export class UnsafeAuthorizationServer extends Error {
  override name = "UnsafeAuthorizationServer";
}

export interface VerifiedServer {
  /** The issuer, verified against the URL it was discovered at. */
  issuer: string;
  /** Its metadata promises an `iss` on every authorization response (RFC 9207 §2.4). */
  issRequired: boolean;
}

function parse(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

/**
 * Whether the metadata found at `at` may name `issuer`: the same URL after RFC 3986 normalisation,
 * up to one terminating "/" on a path — RFC 8414 §3.1 removes it before inserting the well-known
 * part (and the SDK does), so both name the same metadata document.
 */
export function discoveredAs(issuer: string, at: string): boolean {
  const key = (u: string) => {
    const n = normalIssuer(u);
    const url = parse(n);
    return url && !url.search && !url.hash && url.pathname !== "/" && n.endsWith("/") ? n.slice(0, -1) : n;
  };
  return key(issuer) === key(at);
}

/** The issuer a login is bound to: `oauth.issuer` when the manifest names one, else the stored login's. */
export interface BoundIssuer {
  issuer: string;
  from: "manifest" | "login";
}

export function boundIssuer(
  configured: string | undefined,
  stored: string | undefined,
): BoundIssuer | undefined {
  if (configured) return { issuer: configured, from: "manifest" };
  return stored ? { issuer: stored, from: "login" } : undefined;
}

/** How to accept a genuine move of `server`'s authorization server: forget the login, log in again. */
export function reloginHint(adapterDir: string, server: string): string {
  const q = `${shellQuote(adapterDir)} ${server}`;
  return `run 'hermit logout ${q}', then 'hermit login ${q}'`;
}

/**
 * Refuses (`UnsafeAuthorizationServer`) an authorization server other than the one the login is
 * bound to, before anything is sent to it: a client secret, a code or a refresh token only ever
 * goes to the issuer it belongs to. `relogin` says how to accept a genuine move.
 */
export function checkBoundIssuer(
  found: string,
  bound: BoundIssuer | undefined,
  relogin: string,
  consequence: string,
): void {
  if (!bound || discoveredAs(found, bound.issuer)) return;
  const [was, fix] = bound.from === "manifest"
    ? [`oauth.issuer names ${bound.issuer}`, `set oauth.issuer to ${found}`]
    : [`the stored login is from ${bound.issuer}`, relogin];
  throw new UnsafeAuthorizationServer(
    `its authorization server is now ${found}, but ${was}; ${consequence}, nothing was sent to ${found} ` +
      `(if it really moved: ${fix})`,
  );
}

const ENDPOINTS = ["authorization_endpoint", "token_endpoint", "registration_endpoint"] as const;

/**
 * The issuer of the authorization server in `state`, once it passes the checks above; otherwise
 * an `UnsafeAuthorizationServer` whose one line ends with `consequence` ("not logging in").
 */
export function verifyDiscovery(state: OAuthDiscoveryState, consequence: string): VerifiedServer {
  const at = state.authorizationServerUrl;
  const refuse = (what: string) => new UnsafeAuthorizationServer(`${what}; ${consequence}`);
  const base = parse(at);
  if (!base || (base.protocol !== "https:" && !(base.protocol === "http:" && isLoopback(base)))) {
    throw refuse(`the authorization server ${at} is not https (OAuth requires https except on loopback)`);
  }
  const meta = state.authorizationServerMetadata;
  if (!meta) return { issuer: at, issRequired: false }; // the SDK then uses /authorize, /token, /register on it
  if (typeof meta.issuer !== "string" || !discoveredAs(meta.issuer, at)) {
    throw refuse(
      `the authorization server at ${at} says its issuer is ${meta.issuer} (RFC 8414 requires them to match)`,
    );
  }
  for (const name of ENDPOINTS) {
    const value = (meta as Record<string, unknown>)[name];
    if (value === undefined) continue;
    const url = parse(String(value));
    const ok = url?.protocol === "https:" ||
      (url?.protocol === "http:" && isLoopback(url) && isLoopback(base));
    if (!ok) {
      throw refuse(
        `the authorization server ${meta.issuer} has its ${name} at ${value}, which is not https ` +
          "(OAuth requires https except on loopback)",
      );
    }
  }
  const issRequired =
    (meta as Record<string, unknown>).authorization_response_iss_parameter_supported === true;
  return { issuer: meta.issuer, issRequired };
}
