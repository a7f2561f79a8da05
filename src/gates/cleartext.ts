/**
 * Credentials never cross the network in cleartext: a remote upstream whose MCP server URL is
 * plain `http://` to another host than loopback is refused when hermit would send it something
 * secret — an OAuth access token (`auth: oauth`), any `headers:` (they are where static tokens
 * are written, and hermit cannot tell an API key from a harmless header), or credentials in the
 * URL itself (`user:password@`, a `${…}` in its query such as `?api_key=${env:KEY}`). Plain http
 * with none of these (a server on the LAN with nothing to steal) is the user's call and allowed.
 * Judged on the URL as it runs, after `${…}` interpolation: by `check`, and right before every
 * connection and login. Pure.
 */
import type { Upstream } from "../manifest/types.ts";
import { isCleartextOffLoopback } from "./loopback.ts";

/** What `u` would send in cleartext over `url`, e.g. "its OAuth access token and headers (Authorization)". */
function secretsFor(u: Pick<Upstream, "url" | "headers" | "auth">, url: URL): string[] {
  const out: string[] = [];
  if (u.auth === "oauth") out.push("its OAuth access token");
  const headers = Object.keys(u.headers);
  if (headers.length) out.push(`headers (${headers.join(", ")})`);
  if (url.username || url.password) out.push("the credentials in its URL");
  const written = u.url ?? "";
  const query = written.indexOf("?");
  if (query >= 0 && written.includes("${", query)) out.push("the ${…} values in its query");
  return out;
}

/**
 * The one line refusing `u` when it runs with `runUrl` (its `url` interpolated), or undefined.
 * `file` is the manifest it is written in.
 */
export function cleartextRefusal(
  u: Pick<Upstream, "name" | "url" | "headers" | "auth">,
  runUrl: string,
  file: string,
): string | undefined {
  let url: URL;
  try {
    url = new URL(runUrl);
  } catch {
    return undefined; // not a URL: connecting says so
  }
  if (!isCleartextOffLoopback(url)) return undefined;
  const secrets = secretsFor(u, url);
  if (!secrets.length) return undefined;
  const what = secrets.length > 1
    ? `${secrets.slice(0, -1).join(", ")} and ${secrets[secrets.length - 1]}`
    : secrets[0];
  return `refused: mcp_servers.${u.name}: its url ${url.origin}${url.pathname} (${file}) is plain http ` +
    `to another host, so ${what} would cross the network in cleartext; use https:// (plain http ` +
    "only to loopback: 127.0.0.1, ::1, localhost, e.g. through an SSH tunnel)";
}
