/**
 * A `fetch` wrapper for one OAuth upstream that watches refresh-token requests. Concurrent
 * refreshes with the same refresh token (a keepalive ping and N calls all hitting 401 after the
 * access token ran out) become one request whose answer every caller gets: an authorization
 * server that rotates refresh tokens and treats reuse as theft would otherwise revoke the grant.
 * It also remembers whether the last refresh failed for a passing reason (network error, 5xx),
 * so that failure is reported as such and not as "needs a login" (Hermes #76590), and which
 * refresh tokens were refused, so they are not offered again — without deleting anything.
 */
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { messageOf } from "../../errors.ts";

interface Captured {
  status: number;
  statusText: string;
  headers: Headers;
  body: ArrayBuffer;
}

function refreshBody(init: RequestInit | undefined): string | undefined {
  if (!init || (init.method ?? "GET").toUpperCase() !== "POST") return undefined;
  const b = init.body;
  const params = b instanceof URLSearchParams
    ? b
    : typeof b === "string"
    ? new URLSearchParams(b)
    : undefined;
  return params?.get("grant_type") === "refresh_token" ? params.toString() : undefined;
}

function errorCode(body: ArrayBuffer): string | undefined {
  try {
    return (JSON.parse(new TextDecoder().decode(body)) as { error?: string }).error;
  } catch {
    return undefined;
  }
}

export class RefreshGuard {
  readonly #base: FetchLike;
  readonly #inFlight = new Map<string, Promise<Captured>>();
  /** Why the most recent refresh failed in a way that may pass; cleared when one starts. */
  transientFailure: string | undefined;
  /** Refresh tokens the authorization server refused (`invalid_grant`): not offered again. */
  readonly refused = new Set<string>();

  constructor(base: FetchLike = (url, init) => fetch(url, init)) {
    this.#base = base;
  }

  readonly fetch: FetchLike = async (url, init) => {
    const body = refreshBody(init);
    if (body === undefined) return this.#base(url, init);
    const key = `${String(url)}\n${body}`;
    let pending = this.#inFlight.get(key);
    if (!pending) {
      pending = this.#refresh(url, init).finally(() => this.#inFlight.delete(key));
      this.#inFlight.set(key, pending);
    }
    const c = await pending;
    return new Response(c.body.byteLength ? c.body.slice(0) : null, {
      status: c.status,
      statusText: c.statusText,
      headers: c.headers,
    });
  };

  async #refresh(url: string | URL, init: RequestInit | undefined): Promise<Captured> {
    this.transientFailure = undefined;
    try {
      const res = await this.#base(url, init);
      const body = await res.arrayBuffer();
      if (res.status >= 500) this.transientFailure = `the authorization server answered HTTP ${res.status}`;
      else if (res.status >= 400 && errorCode(body) === "invalid_grant") {
        const token = new URLSearchParams(refreshBody(init)).get("refresh_token");
        if (token) this.refused.add(token);
      }
      return { status: res.status, statusText: res.statusText, headers: res.headers, body };
    } catch (err) {
      this.transientFailure = `the authorization server did not answer: ${messageOf(err)}`;
      throw err;
    }
  }
}
