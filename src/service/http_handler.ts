/**
 * The standalone service's HTTP front: routing and the HTTP-side security. Requests past the cap
 * on open requests get 503 at once, except `/health` and `/health/live`: answered at once from
 * memory, they hold nothing open, and a busy service must not look gone. `/mcp` needs a Host
 * (HTTP/1.0 and an empty Host get 400), an allowed Host and Origin (DNS rebinding) and the bearer
 * token (constant-time compare); its body is capped. `/health` (readiness: 200 when serving, 503 while starting or draining) and
 * `/health/live` (200 while the process answers) check Host and Origin too, but take a request
 * without Host (a balancer's plain HTTP/1.0 check; no browser sends one): without the token they
 * answer only the status, with it the operator's details. `POST /hermit/stop` (with the token)
 * stops the service. Refusals are answers, not errors: nothing is logged above debug for them.
 */
import { timingSafeEqual } from "node:crypto";
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { log } from "../log.ts";
import type { RequestInfo } from "../platform/http.ts";
import { HTTP_REFUSED, jsonRpcError, SERVICE_BUSY } from "./http_errors.ts";

const MAX_BODY_BYTES = 4 * 1024 * 1024;
export const MCP_PATH = "/mcp";

export interface SecurityConfig {
  token: string;
  /** Hostnames (no port) a Host header may name; empty = any (a non-loopback bind without --allowed-host). */
  allowedHosts: string[];
  /** Origins (scheme://host[:port]) a browser may send from; requests without Origin are fine. */
  allowedOrigins: string[];
  /** Requests open at once (`serve.max_connections`); past it, 503. */
  maxOpenRequests: number;
}

export function loopbackHosts(): string[] {
  return ["127.0.0.1", "localhost", "[::1]", "::1"];
}

/** The host name of a Host header; a bracketed one followed by anything but a port is kept whole (no match). */
function hostnameOf(hostHeader: string): string {
  if (hostHeader.startsWith("[")) {
    const end = hostHeader.indexOf("]");
    return end > 0 && /^(:\d+)?$/.test(hostHeader.slice(end + 1)) ? hostHeader.slice(0, end + 1) : hostHeader;
  }
  return hostHeader.replace(/:\d+$/, "");
}

/** The path of a request, whatever the runtime made of its URL without a usable Host. */
export function requestPath(url: string): string {
  const rest = url.startsWith("/") ? url : url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, "");
  const end = rest.search(/[?#]/);
  return (end < 0 ? rest : rest.slice(0, end)) || "/";
}

type Verdict = { ok: true } | { ok: false; status: 400 | 401 | 403; message: string };

/** Host and Origin; `hostless` lets a request without Host through (plain health checks). */
function checkHostAndOrigin(headers: Headers, cfg: SecurityConfig, hostless: boolean): Verdict {
  const host = headers.get("host")?.trim() ?? "";
  if (!host && !hostless) {
    return { ok: false, status: 400, message: "Bad Request: a Host header is required (HTTP/1.1)" };
  }
  if (host && cfg.allowedHosts.length && !cfg.allowedHosts.includes(hostnameOf(host).toLowerCase())) {
    return { ok: false, status: 403, message: `Forbidden: Host '${host}' is not allowed` };
  }
  const origin = headers.get("origin");
  if (origin === "null") {
    return { ok: false, status: 403, message: "Forbidden: Origin 'null' is not allowed" };
  }
  if (origin && !cfg.allowedOrigins.includes(origin) && !loopbackOrigin(origin, cfg)) {
    return { ok: false, status: 403, message: `Forbidden: Origin '${origin}' is not allowed` };
  }
  return { ok: true };
}

function loopbackOrigin(origin: string, cfg: SecurityConfig): boolean {
  try {
    const u = new URL(origin);
    return cfg.allowedHosts.length > 0 && loopbackHosts().includes(u.hostname) &&
      cfg.allowedHosts.includes(u.hostname);
  } catch {
    return false;
  }
}

/** Undefined without an Authorization header; else whether it carries the token. */
function checkToken(headers: Headers, token: string): Verdict | undefined {
  const auth = headers.get("authorization");
  if (auth === null) return undefined;
  const m = /^Bearer\s+(.+)$/i.exec(auth);
  if (!m) return { ok: false, status: 401, message: "Unauthorized: a bearer token is required" };
  const given = Buffer.from(m[1].trim());
  const want = Buffer.from(token);
  const same = given.length === want.length && timingSafeEqual(given, want);
  return same ? { ok: true } : { ok: false, status: 401, message: "Unauthorized: wrong token" };
}

const tooLarge = (max: number) =>
  jsonRpcError(413, ErrorCode.InvalidRequest, `Request body over ${max} bytes (the service's limit)`);

/** The body as parsed JSON, or a response refusing it (too large or not JSON). */
async function readBody(
  req: Request,
  max = MAX_BODY_BYTES,
): Promise<{ body: unknown } | { response: Response }> {
  const declared = req.headers.get("content-length");
  if (Number(declared ?? 0) > max) return { response: tooLarge(max) };
  if (!req.body) return { body: undefined };
  let text: string;
  if (declared !== null) text = await req.text(); // the runtime holds it to the declared length
  else {
    const reader = req.body.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      size += value.length;
      if (size > max) {
        await reader.cancel().catch(() => {});
        return { response: tooLarge(max) };
      }
      chunks.push(value);
    }
    text = Buffer.concat(chunks).toString("utf8");
  }
  if (!text) return { body: undefined };
  try {
    return { body: JSON.parse(text) };
  } catch {
    return { response: jsonRpcError(400, ErrorCode.ParseError, "Parse error: the body is not JSON") };
  }
}

/** What `/health` answers: the HTTP status and the body for the caller's view. */
export interface HealthAnswer {
  status: 200 | 503;
  body: unknown;
}

export interface Routes {
  /** Readiness, for a caller with (`operator`) or without the token. */
  health(operator: boolean): HealthAnswer;
  /** Liveness: the process answers. */
  live(operator: boolean): HealthAnswer;
  mcp(req: Request, body: unknown, info: RequestInfo): Promise<Response>;
  stop(): void;
  openRequests(): number;
}

function refused(v: Exclude<Verdict, { ok: true }>, what: string): Response {
  log.debug(`refused ${what}: ${v.status} ${v.message}`);
  const auth: Record<string, string> = v.status === 401
    ? { "www-authenticate": 'Bearer realm="hermit"' }
    : {};
  return jsonRpcError(v.status, HTTP_REFUSED, v.message, auth);
}

export function createHandler(
  cfg: SecurityConfig,
  routes: Routes,
): (req: Request, info: RequestInfo) => Promise<Response> {
  return async (req, info) => {
    const path = requestPath(req.url);
    const what = `${req.method} ${path}`;
    // before the cap: a busy service must still say it is alive, or status, stop and relays take
    // it for gone. Cheap: answered at once from memory, no body read, nothing held open.
    if (path === "/health" || path === "/health/live") {
      if (req.method !== "GET" && req.method !== "HEAD") {
        return new Response("Method not allowed\n", { status: 405, headers: { allow: "GET, HEAD" } });
      }
      const where = checkHostAndOrigin(req.headers, cfg, true);
      if (!where.ok) return refused(where, what);
      const who = checkToken(req.headers, cfg.token);
      if (who && !who.ok) return refused(who, what);
      const answer = path === "/health" ? routes.health(who !== undefined) : routes.live(who !== undefined);
      return new Response(req.method === "HEAD" ? null : JSON.stringify(answer.body), {
        status: answer.status,
        headers: { "content-type": "application/json", "cache-control": "no-store" },
      });
    }
    if (routes.openRequests() > cfg.maxOpenRequests) {
      log.debug(`refused ${what}: over ${cfg.maxOpenRequests} open requests`);
      return jsonRpcError(
        503,
        SERVICE_BUSY,
        `Service Unavailable: ${cfg.maxOpenRequests} requests are open at once (serve.max_connections); retry shortly`,
        { "retry-after": "1" },
      );
    }
    if (path !== MCP_PATH && path !== "/hermit/stop") return new Response("Not found\n", { status: 404 });
    const where = checkHostAndOrigin(req.headers, cfg, false);
    if (!where.ok) return refused(where, what);
    const who = checkToken(req.headers, cfg.token) ??
      { ok: false, status: 401, message: "Unauthorized: a bearer token is required" };
    if (!who.ok) return refused(who, what);
    if (path === "/hermit/stop") {
      if (req.method !== "POST") return new Response("Method not allowed\n", { status: 405 });
      routes.stop();
      return Response.json({ stopping: true }, { status: 202 });
    }
    const read = req.method === "POST" ? await readBody(req) : { body: undefined };
    if ("response" in read) return read.response;
    const release = info.keepOpen(); // a call may take longer than an idle connection may last
    try {
      return await routes.mcp(req, read.body, info);
    } finally {
      release();
    }
  };
}
