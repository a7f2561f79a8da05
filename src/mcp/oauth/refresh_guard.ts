/**
 * A `fetch` wrapper for one OAuth upstream that watches refresh-token requests. Concurrent
 * refreshes with the same refresh token (a keepalive ping and N calls all hitting 401 after the
 * access token ran out) become one request whose answer every caller gets: an authorization
 * server that rotates refresh tokens and treats reuse as theft would otherwise revoke the grant.
 * It also remembers whether the last refresh failed for a passing reason (network error, 5xx),
 * so that failure is reported as such and not as "needs a login" (Hermes #76590), and which
 * refresh tokens were refused, so they are not offered again — without deleting anything.
 *
 * Across processes (every session's `hermit serve`, `call`, `check` on one login), a refresh
 * holds a file lock next to the stored login and stores its answer before letting go; a process
 * that waited takes what the other stored instead of presenting the refresh token it read
 * before, which a rotating server would take for a stolen one and revoke the whole grant. The
 * holder notes its pid beside the lock, so a process kept waiting can say whose refresh it waits
 * for (`waitingFor`). A login removed meanwhile (`hermit logout`) ends the refresh as "needs a
 * login": its answer is not used and nothing of the login's directory is made again.
 */
import type { OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { closeSync, constants, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import process from "node:process";
import { messageOf } from "../../errors.ts";
import { acquireLock } from "../../platform/lock.ts";

/** How long a refresh waits for another process's refresh of the same login. */
export const REFRESH_LOCK_MS = 30_000;
/** How long a refresh request may take: the lock is let go well before another's wait ends. */
export const REFRESH_SEND_MS = 20_000;

/** The stored login a refresh is for, as every process sees it. */
export interface SharedLogin {
  /** The lock file one refresh at a time holds, in the login's directory (nothing made). */
  lockPath(): string;
  /** Where the refresh holding the lock notes its pid. */
  holderPath(): string;
  /** Whether the login is still stored (`hermit logout` may remove it while a refresh runs). */
  stored(): boolean;
  /** Tokens stored since `since` (ms) or rotated past `sent`, still valid: no refresh needed. */
  current(sent: string, since: number): OAuthTokens | undefined;
  /** Store a refresh answer for `sent` now, before the lock is let go. */
  save(sent: string, answer: OAuthTokens): void;
}

interface Captured {
  status: number;
  statusText: string;
  headers: Headers;
  body: ArrayBuffer;
  /** The tokens in a 200 answer, read once (absent when it holds none). */
  tokens?: OAuthTokens;
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

/** Why a refresh ended with no answer: the login it was for is gone; the SDK then says "needs a login". */
class LoginRemoved extends Error {
  constructor() {
    super("the stored login was removed (hermit logout) while it was being refreshed");
    this.name = "LoginRemoved";
  }
}

/** What a running refresh waits for: the lock another process holds, or the authorization server. */
interface Activity {
  on: "lock" | "server";
  since: number;
}

export class RefreshGuard {
  readonly #base: FetchLike;
  readonly #inFlight = new Map<string, Promise<Captured>>();
  /** What each refresh in flight (by key) waits for now. */
  readonly #activity = new Map<string, Activity>();
  /** Why the most recent refresh failed in a way that may pass; cleared when one starts. */
  transientFailure: string | undefined;
  /** Refresh tokens the authorization server refused (`invalid_grant`): not offered again. */
  readonly refused = new Set<string>();

  readonly #shared: SharedLogin;

  readonly #sendMs: number;

  constructor(base: FetchLike | undefined, shared: SharedLogin, sendMs = REFRESH_SEND_MS) {
    this.#base = base ?? ((url, init) => fetch(url, init));
    this.#shared = shared;
    this.#sendMs = sendMs;
  }

  readonly fetch: FetchLike = async (url, init) => {
    const body = refreshBody(init);
    if (body === undefined) return this.#base(url, init);
    const key = `${String(url)}\n${body}`;
    let pending = this.#inFlight.get(key);
    if (!pending) {
      pending = this.#refresh(url, init, key).finally(() => {
        this.#inFlight.delete(key);
        this.#activity.delete(key);
      });
      this.#inFlight.set(key, pending);
    }
    const c = await pending;
    return new Response(c.body.byteLength ? c.body.slice(0) : null, {
      status: c.status,
      statusText: c.statusText,
      headers: c.headers,
    });
  };

  /**
   * What a refresh of this login waits for right now, in words, or undefined when none runs: said
   * instead of "still starting" when a caller stops waiting first.
   */
  waitingFor(): string | undefined {
    const a = this.#activity.values().next().value;
    if (!a) return undefined;
    const secs = `${Math.floor((Date.now() - a.since) / 1000)} s`;
    if (a.on === "server") {
      return `refreshing its OAuth access token (the authorization server has not answered for ${secs})`;
    }
    return `waiting for ${this.#holder()} to finish refreshing its OAuth login (${secs} so far)`;
  }

  /** "another hermit (pid N)": the process that noted itself as the lock's holder. */
  #holder(): string {
    const pid = holderPid(this.#shared.holderPath());
    return `another hermit${pid ? ` (pid ${pid})` : ""}`;
  }

  async #refresh(url: string | URL, init: RequestInit | undefined, key: string): Promise<Captured> {
    this.transientFailure = undefined;
    const sent = new URLSearchParams(refreshBody(init)).get("refresh_token") ?? "";
    const shared = this.#shared;
    const since = Date.now();
    if (!shared.stored()) throw new LoginRemoved();
    const lockFile = shared.lockPath();
    let lock: Awaited<ReturnType<typeof acquireLock>>;
    this.#activity.set(key, { on: "lock", since });
    try {
      lock = await acquireLock(lockFile, REFRESH_LOCK_MS);
    } catch (err) {
      if (!shared.stored()) throw new LoginRemoved(); // its directory went with it
      const code = (err as NodeJS.ErrnoException).code ?? messageOf(err);
      this.transientFailure = `cannot open the refresh lock ${lockFile} (${code}); remove it`;
      throw err;
    }
    if (!lock) {
      this.transientFailure = `${this.#holder()} has been refreshing this login for ${
        REFRESH_LOCK_MS / 1000
      } s`;
      throw new Error(this.transientFailure);
    }
    try {
      if (!shared.stored()) throw new LoginRemoved();
      noteHolder(shared.holderPath());
      const stored = shared.current(sent, since);
      if (stored) return answer(stored);
      this.#activity.set(key, { on: "server", since: Date.now() });
      const c = await this.#send(url, init, sent);
      if (!shared.stored()) throw new LoginRemoved(); // logged out meanwhile: the answer is not used
      if (c.tokens) shared.save(sent, c.tokens);
      return c;
    } finally {
      forgetHolder(shared.holderPath()); // still under the lock: no other holder has noted itself
      lock.release();
    }
  }

  async #send(url: string | URL, init: RequestInit | undefined, sent: string): Promise<Captured> {
    const timeout = AbortSignal.timeout(this.#sendMs);
    const signal = init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    try {
      const res = await this.#base(url, { ...init, signal });
      const body = await res.arrayBuffer();
      const tokens = res.status === 200 ? tokensIn(body) : undefined;
      if (res.status >= 500) this.transientFailure = `the authorization server answered HTTP ${res.status}`;
      else if (res.status === 200 && !tokens) {
        const type = res.headers.get("content-type") ?? "no content-type";
        this.transientFailure =
          `the authorization server answered a refresh with no tokens (HTTP 200, ${type})`;
      } else if (res.status >= 400 && errorCode(body) === "invalid_grant" && sent) this.refused.add(sent);
      return { status: res.status, statusText: res.statusText, headers: res.headers, body, tokens };
    } catch (err) {
      this.transientFailure = timeout.aborted
        ? `the authorization server did not answer within ${this.#sendMs / 1000} s`
        : `the authorization server did not answer: ${messageOf(err)}`;
      throw err;
    }
  }
}

/** Note this process as the lock's holder (best effort; never through a symlink, never making a directory). */
function noteHolder(file: string): void {
  try {
    const fd = openSync(
      file,
      constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | (constants.O_NOFOLLOW ?? 0),
      0o600,
    );
    try {
      writeSync(fd, `${process.pid}\n`);
    } finally {
      closeSync(fd);
    }
  } catch { /* the pid only serves a message */ }
}

/** Remove this process's note as the lock's holder (one naming another process is left alone). */
function forgetHolder(file: string): void {
  try {
    if (holderPid(file) === process.pid) unlinkSync(file);
  } catch { /* gone with the login, or never written */ }
}

/** The pid the lock's holder noted, if readable. */
function holderPid(file: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(file, "utf8"), 10);
    return pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** A token answer's fields, when it is one (the SDK checks it properly afterwards). */
function tokensIn(body: ArrayBuffer): OAuthTokens | undefined {
  try {
    const t = JSON.parse(new TextDecoder().decode(body)) as OAuthTokens;
    return typeof t?.access_token === "string" && typeof t.token_type === "string" ? t : undefined;
  } catch {
    return undefined;
  }
}

/** Stored tokens as the token endpoint's answer (no `issuer`: the SDK adds its own). */
function answer(t: OAuthTokens): Captured {
  const { issuer: _issuer, ...fields } = t;
  return {
    status: 200,
    statusText: "OK",
    headers: new Headers({ "content-type": "application/json" }),
    body: new TextEncoder().encode(JSON.stringify(fields)).buffer as ArrayBuffer,
  };
}
