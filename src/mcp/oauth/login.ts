/**
 * `hermit login` and `hermit logout` as domain functions. A login connects to the upstream the
 * way a session does, lets the SDK discover the authorization server (RFC 9728, RFC 8414),
 * register hermit (RFC 7591) and build the PKCE authorization URL, prints that URL, and takes the
 * answer from the loopback callback or from a pasted line, whichever comes first. The code is
 * exchanged, the new token is tried against the MCP server, and only then is anything written.
 * No browser is ever opened: the same flow works on a laptop and over SSH.
 */
import process from "node:process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { Exit, HermitError, messageOf, usageError } from "../../errors.ts";
import { SAFE_MODE_NOTICE, safeMode } from "../../gates/safe_mode.ts";
import { contextFrom } from "../../manifest/interpolate.ts";
import type { Manifest, Upstream } from "../../manifest/types.ts";
import { own } from "../../platform/own.ts";
import { VERSION } from "../../version.ts";
import { describeFailure } from "../upstream_client.ts";
import { buildTransport, UpstreamRefused } from "../upstream_transport.ts";
import { type AuthAnswer, type CallbackServer, parsePasted, startCallbackServer } from "./callback.ts";
import { judgeAnswer, type Verdict } from "./answer.ts";
import { resolveOAuth } from "./client.ts";
import { reloginHint, UnsafeAuthorizationServer } from "./discovery.ts";
import { LoginOAuthProvider } from "./login_provider.ts";
import { type OAuthStore, oauthStoreFor } from "./store.ts";

export interface LoginIO {
  /** Instructions for the person (stderr). */
  say(text: string): void;
  /** Deliver pasted lines to `onLine` until the returned function is called. */
  readLines?(onLine: (line: string) => void): () => void;
  /** Show that `what` is being waited on (a terminal's progress line) until `done()`. */
  waiting?(what: string): { done(): void };
}

export interface LoginOptions {
  timeoutMs: number;
  env?: Readonly<Record<string, string | undefined>>;
  cwd?: string;
  platform?: NodeJS.Platform;
}

export interface LoginResult {
  /** `not-needed`: the server answered without asking for authorization. */
  status: "logged-in" | "not-needed";
  tools: number;
  dir: string;
}

const UNCHANGED = "the stored login is unchanged";

/** The upstream `server` of `manifest`, when `hermit login`/`logout` can act on it. */
export function oauthUpstream(manifest: Manifest, server: string): Upstream {
  const u = own(manifest.upstreams, server);
  if (!u) {
    const names = Object.keys(manifest.upstreams);
    throw usageError(
      `${manifest.file} has no mcp_servers.${server}${
        names.length ? `; its servers: ${names.join(", ")}` : ""
      }`,
    );
  }
  if (u.kind === "stdio") {
    throw usageError(`mcp_servers.${server} is a stdio server; OAuth is for url: servers`);
  }
  if (u.auth !== "oauth") {
    throw usageError(`mcp_servers.${server} does not use OAuth; add 'auth: oauth' to it in ${manifest.file}`);
  }
  return u;
}

function storeFor(manifest: Manifest, server: string, o: Omit<LoginOptions, "timeoutMs">): OAuthStore {
  return oauthStoreFor(manifest.name, server, o.platform ?? process.platform, o.env ?? process.env);
}

/** Forget a server's stored login. True when there was one. */
export function logout(
  manifest: Manifest,
  server: string,
  o: Omit<LoginOptions, "timeoutMs"> = {},
): { removed: boolean; dir: string } {
  oauthUpstream(manifest, server);
  const store = storeFor(manifest, server, o);
  return { removed: store.remove(), dir: store.dir };
}

/** The redirect port: the configured one, else the one the stored client was registered with, else any. */
async function listen(
  configured: number | undefined,
  previous: number | undefined,
  onAnswer: Parameters<typeof startCallbackServer>[1],
): Promise<CallbackServer> {
  if (configured !== undefined) {
    try {
      return await startCallbackServer(configured, onAnswer);
    } catch (err) {
      throw new HermitError(
        `cannot listen on 127.0.0.1:${configured} (oauth.redirect_port): ${messageOf(err)}`,
      );
    }
  }
  if (previous) {
    try {
      return await startCallbackServer(previous, onAnswer);
    } catch { /* taken: any free port, and a new registration */ }
  }
  return await startCallbackServer(0, onAnswer);
}

/** "5 min", "90 s": how long login waits, as the instructions say it. */
function waitShown(ms: number): string {
  const s = Math.round(ms / 1000);
  return s % 60 === 0 ? `${s / 60} min` : `${s} s`;
}

function previousPort(store: OAuthStore): number | undefined {
  const uris = (store.readClient() as { redirect_uris?: string[] } | undefined)?.redirect_uris ?? [];
  for (const uri of uris) {
    const m = /^http:\/\/127\.0\.0\.1:(\d+)\/callback$/.exec(uri);
    if (m) return Number(m[1]);
  }
  return undefined;
}

export async function login(
  manifest: Manifest,
  server: string,
  io: LoginIO,
  o: LoginOptions,
): Promise<LoginResult> {
  const u = oauthUpstream(manifest, server);
  const env = o.env ?? process.env;
  if (safeMode(env)) throw new HermitError(`refused: ${SAFE_MODE_NOTICE}`, Exit.refused);
  const interpolation = contextFrom(env, o.cwd ?? process.cwd());
  const { serverUrl, oauth } = resolveOAuth(u, interpolation);
  const store = storeFor(manifest, server, o);
  const where = `mcp_servers.${server}`;

  const ref: { provider?: LoginOAuthProvider } = {}; // the callback server starts before the provider
  let deliver: (a: AuthAnswer | "cancel" | "timeout") => void = () => {};
  const answered = new Promise<AuthAnswer | "cancel" | "timeout">((r) => (deliver = r));
  let taken = false; // the first answer judgeAnswer takes is the one used
  const accept = (a: AuthAnswer): Verdict => {
    const p = ref.provider;
    const verdict = judgeAnswer(a, p?.authorizationUrl ? p : undefined, taken);
    if (verdict.taken) {
      taken = true;
      deliver(a);
    }
    return verdict;
  };

  const callback = await listen(oauth.redirectPort, previousPort(store), accept);
  const relogin = reloginHint(manifest.dir, server);
  const p = new LoginOAuthProvider({ store, serverUrl, oauth, redirectUrl: callback.redirectUrl, relogin });
  ref.provider = p;
  const open = async (): Promise<Transport> => {
    try {
      return (await buildTransport(u, {
        adapterDir: manifest.dir,
        manifestFile: manifest.file,
        interpolation,
        parentEnv: env,
        platform: o.platform ?? process.platform,
        authProvider: p,
      })).transport;
    } catch (err) {
      if (err instanceof UpstreamRefused) throw new HermitError(err.message, Exit.refused);
      throw new HermitError(`${where}: ${messageOf(err)}`, Exit.usage);
    }
  };
  const connectAndList = async (t: Transport): Promise<number> => {
    const client = new Client({ name: "hermit", version: VERSION }, { capabilities: {} });
    const timeout = u.connectTimeoutSeconds * 1000;
    try {
      await client.connect(t, { timeout });
      const caps = client.getServerCapabilities();
      return caps?.tools ? (await client.listTools(undefined, { timeout })).tools.length : 0;
    } finally {
      await client.close().catch(() => {});
    }
  };

  let stopReading = () => {};
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const first = await open();
    const contacting = io.waiting?.(`${serverUrl} (discovery and client registration)`);
    try {
      const tools = await connectAndList(first);
      contacting?.done();
      return { status: "not-needed", tools, dir: store.dir };
    } catch (err) {
      contacting?.done();
      if (err instanceof UnsafeAuthorizationServer) throw new HermitError(`${where}: ${err.message}`);
      if (!p.authorizationUrl) {
        const why = describeFailure(err, { stderrTail: [], oauth: true });
        const hint = p.needsOwnClient
          ? "; register hermit with it yourself and set oauth.client_id (and client_secret)"
          : "";
        throw new HermitError(`${where}: could not start the login: ${why}${hint}`);
      }
    }
    io.say(
      `To log in to ${where} (${serverUrl}), open this address in a browser:\n\n  ${p.authorizationUrl}\n\n` +
        `hermit is waiting for the browser to come back to ${callback.redirectUrl}.\n` +
        "Browser on another machine? After approving, copy the address it ends on (that page will not load)\n" +
        `and paste it here, or just the code; q cancels. (hermit waits up to ${waitShown(o.timeoutMs)}.)\n`,
    );
    stopReading = io.readLines?.((line) => {
      const a = parsePasted(line);
      if (a === "cancel") return deliver("cancel");
      if (!a) return io.say("not understood: paste the whole address the browser ended on, or the code\n");
      const { taken, message } = accept(a);
      if (!taken) io.say(`${message}\n`);
    }) ?? stopReading;
    timer = setTimeout(() => deliver("timeout"), o.timeoutMs);
    const answer = await answered;
    if (answer === "timeout") {
      throw new HermitError(`no answer within ${Math.round(o.timeoutMs / 1000)} s; ${UNCHANGED}`);
    }
    if (answer === "cancel") throw new HermitError(`login cancelled; ${UNCHANGED}`);
    if (answer.kind === "error") {
      throw new HermitError(
        `the authorization server refused: ${answer.error}${
          answer.description ? ` (${answer.description})` : ""
        }; ${UNCHANGED}`,
      );
    }
    const exchanging = io.waiting?.("the code exchange and a first connection with the new token");
    try {
      await (first as Transport & { finishAuth(code: string): Promise<void> }).finishAuth(answer.code);
    } catch (err) {
      exchanging?.done();
      throw new HermitError(`exchanging the authorization code failed: ${messageOf(err)}; ${UNCHANGED}`);
    }
    let tools: number;
    try {
      tools = await connectAndList(await open());
    } catch (err) {
      exchanging?.done();
      throw new HermitError(
        `${where} did not accept the new token: ${
          describeFailure(err, { stderrTail: [], oauth: true })
        }; ${UNCHANGED}`,
      );
    }
    exchanging?.done();
    p.commit();
    return { status: "logged-in", tools, dir: store.dir };
  } finally {
    clearTimeout(timer);
    stopReading();
    await callback.close().catch(() => {});
  }
}
