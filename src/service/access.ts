/**
 * How a client reaches a service and what to say when it cannot: the `--serve-url` (http or
 * https, no credentials in it, http only on loopback when a token goes to it), the bearer token file (`--token-file`, for the service and for
 * a relay alike), the start-up check that the service accepts a relay's Host and token, and the
 * one-line message for a 401 or 403 the service answers.
 */
import { readFileSync } from "node:fs";
import { usageError } from "../errors.ts";
import { isCleartextOffLoopback } from "../gates/loopback.ts";
import { fetchFor } from "./endpoint.ts";

/** The environment variable a remote entry's bearer token is read from, in every host. */
export const TOKEN_VAR = "HERMIT_SERVE_TOKEN";

/**
 * `--serve-url`: an http(s) URL without credentials (the token travels in a header). `tokenBy`
 * names who sends the token to it, when one is sent ("this relay", "hosts"): then plain http only
 * to loopback, as the token would otherwise cross the network in cleartext.
 */
export function parseServeUrl(url: string, tokenBy?: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw usageError(`--serve-url '${url}' is not a URL; e.g. --serve-url http://127.0.0.1:8765/mcp`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw usageError(`--serve-url must be an http:// or https:// URL, got '${url}'`);
  }
  if (parsed.username || parsed.password) {
    throw usageError(`--serve-url must not carry credentials; the token comes from ${TOKEN_VAR}`);
  }
  const cleartext = tokenBy === undefined ? undefined : cleartextServeUrl(parsed, tokenBy);
  if (cleartext) throw usageError(`--serve-url ${parsed.href} is ${cleartext}`);
  return parsed;
}

/** Why a token must not go to `url` (plain http to another host than loopback), or undefined. */
export function cleartextServeUrl(url: URL, tokenBy: string): string | undefined {
  if (!isCleartextOffLoopback(url)) return undefined;
  return `plain http to another host, so ${tokenBy} would send the token across the network in ` +
    `cleartext; use https:// (TLS in front of the service: "Behind a reverse proxy with TLS" in the ` +
    "README) or reach it on loopback through a tunnel (ssh -L)";
}

/** The token in `--token-file FILE`: readable, trimmed, at least 16 characters. */
export function readToken(file: string): string {
  let token: string;
  try {
    token = readFileSync(file, "utf8").trim();
  } catch (err) {
    throw usageError(
      `--token-file ${file}: cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"})`,
    );
  }
  if (token.length < 16) throw usageError(`--token-file ${file}: the token must be at least 16 characters`);
  return token;
}

/** The service turned a client away: 401 (token missing or wrong) or 403 (Host or Origin). */
export interface Refusal {
  status: 401 | 403;
  /** The service's own reason, e.g. "Unauthorized: wrong token". */
  detail: string;
}

/**
 * Does the service at `url` accept a client with this token? A GET without a session touches
 * nothing: a hermit service checks Host and token first, then answers 400. Undefined when it
 * accepts, or when it cannot tell (no answer: the relay finds out later).
 */
export async function probeAccess(url: URL, token: string | undefined): Promise<Refusal | undefined> {
  try {
    const res = await fetchFor(url.href)(url.href, {
      method: "GET",
      headers: { accept: "text/event-stream", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      signal: AbortSignal.timeout(5000),
    });
    const refused = res.status === 401 || res.status === 403;
    const body = refused ? await res.text().catch(() => "") : "";
    await res.body?.cancel().catch(() => {});
    return refused
      ? { status: res.status as 401 | 403, detail: reasonIn(body) || res.statusText }
      : undefined;
  } catch {
    return undefined;
  }
}

/** What to tell the user (and the host) when the service at `url` refuses a relay. */
export function refusalMessage(name: string, url: URL, r: Refusal, tokenGiven: boolean): string {
  const at = `the ${name} service at ${url.origin}`;
  if (r.status === 403) {
    return `${at} refused this relay (${r.detail}); if it is a hermit service, start it with --allowed-host ${url.hostname}`;
  }
  return tokenGiven
    ? `${at} refused the token (${r.detail}); set ${TOKEN_VAR} or --token-file to the token the service was started with`
    : `${at} wants a token (${r.detail}); set ${TOKEN_VAR} or pass --token-file FILE`;
}

/** The JSON-RPC error message in a response body (or an error quoting one), else the text itself. */
export function reasonIn(text: string): string {
  const start = text.indexOf("{");
  if (start >= 0) {
    try {
      const message = JSON.parse(text.slice(start))?.error?.message;
      if (typeof message === "string") return message;
    } catch { /* not JSON */ }
  }
  return text.trim().split("\n")[0].slice(0, 200);
}
