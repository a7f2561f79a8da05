/**
 * The standalone service's HTTP front: routing and the HTTP-side security. Host and Origin are
 * validated (DNS rebinding), the bearer token is required on every MCP request (constant-time
 * compare), request bodies are capped, `/health` is open and reports upstream state, and
 * `POST /hermit/stop` (with the token) stops the service. Validators are pure; `createHandler`
 * turns their verdicts into responses.
 */
import { timingSafeEqual } from "node:crypto";
import type { Health } from "./endpoint.ts";
import { jsonRpcError } from "./sessions.ts";

const MAX_BODY_BYTES = 4 * 1024 * 1024;
export const MCP_PATH = "/mcp";

export interface SecurityConfig {
  token: string;
  /** Hostnames (no port) a Host header may name; empty = any (a non-loopback bind without --allowed-host). */
  allowedHosts: string[];
  /** Origins (scheme://host[:port]) a browser may send from; requests without Origin are fine. */
  allowedOrigins: string[];
}

export function loopbackHosts(): string[] {
  return ["127.0.0.1", "localhost", "[::1]", "::1"];
}

function hostnameOf(hostHeader: string): string {
  if (hostHeader.startsWith("[")) return hostHeader.slice(0, hostHeader.indexOf("]") + 1);
  return hostHeader.replace(/:\d+$/, "");
}

type Verdict = { ok: true } | { ok: false; status: 401 | 403; message: string };

function checkHostAndOrigin(headers: Headers, cfg: SecurityConfig): Verdict {
  const host = headers.get("host");
  if (cfg.allowedHosts.length) {
    if (!host || !cfg.allowedHosts.includes(hostnameOf(host).toLowerCase())) {
      return { ok: false, status: 403, message: `Forbidden: Host '${host ?? ""}' is not allowed` };
    }
  }
  const origin = headers.get("origin");
  if (origin && origin !== "null") {
    let ok = cfg.allowedOrigins.includes(origin);
    if (!ok) {
      try {
        const u = new URL(origin);
        ok = cfg.allowedHosts.length > 0 && loopbackHosts().includes(u.hostname) &&
          cfg.allowedHosts.includes(u.hostname);
      } catch {
        ok = false;
      }
    }
    if (!ok) return { ok: false, status: 403, message: `Forbidden: Origin '${origin}' is not allowed` };
  } else if (origin === "null") {
    return { ok: false, status: 403, message: "Forbidden: Origin 'null' is not allowed" };
  }
  return { ok: true };
}

function checkToken(headers: Headers, token: string): Verdict {
  const auth = headers.get("authorization") ?? "";
  const m = /^Bearer\s+(.+)$/i.exec(auth);
  if (!m) return { ok: false, status: 401, message: "Unauthorized: a bearer token is required" };
  const given = Buffer.from(m[1].trim());
  const want = Buffer.from(token);
  const same = given.length === want.length && timingSafeEqual(given, want);
  return same ? { ok: true } : { ok: false, status: 401, message: "Unauthorized: wrong token" };
}

/** The body as parsed JSON, or a response refusing it (too large or not JSON). */
async function readBody(
  req: Request,
  max = MAX_BODY_BYTES,
): Promise<{ body: unknown } | { response: Response }> {
  const declared = Number(req.headers.get("content-length") ?? 0);
  if (declared > max) return { response: jsonRpcError(413, -32600, `Request body over ${max} bytes`) };
  if (!req.body) return { body: undefined };
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > max) {
      await reader.cancel().catch(() => {});
      return { response: jsonRpcError(413, -32600, `Request body over ${max} bytes`) };
    }
    chunks.push(value);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (!text) return { body: undefined };
  try {
    return { body: JSON.parse(text) };
  } catch {
    return { response: jsonRpcError(400, -32700, "Parse error: the body is not JSON") };
  }
}

export interface Routes {
  health(): Health;
  mcp(req: Request, body: unknown): Promise<Response>;
  stop(): void;
}

export function createHandler(cfg: SecurityConfig, routes: Routes): (req: Request) => Promise<Response> {
  return async (req) => {
    const url = new URL(req.url);
    if (url.pathname === "/health" && req.method === "GET") {
      return Response.json(routes.health(), { headers: { "cache-control": "no-store" } });
    }
    if (url.pathname !== MCP_PATH && url.pathname !== "/hermit/stop") {
      return new Response("Not found\n", { status: 404 });
    }
    const where = checkHostAndOrigin(req.headers, cfg);
    if (!where.ok) return jsonRpcError(where.status, -32000, where.message);
    const who = checkToken(req.headers, cfg.token);
    if (!who.ok) {
      return jsonRpcError(who.status, -32000, who.message, { "www-authenticate": 'Bearer realm="hermit"' });
    }
    if (url.pathname === "/hermit/stop") {
      if (req.method !== "POST") return new Response("Method not allowed\n", { status: 405 });
      routes.stop();
      return Response.json({ stopping: true }, { status: 202 });
    }
    const read = req.method === "POST" ? await readBody(req) : { body: undefined };
    if ("response" in read) return read.response;
    return routes.mcp(req, read.body);
  };
}
