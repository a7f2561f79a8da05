/**
 * `hermit serve DIR --standalone`: the shared service. One gateway (one set of upstream processes)
 * behind Streamable HTTP on 127.0.0.1, a session per client, a fresh bearer token per launch,
 * `DIR/.serve/endpoint` written atomically and removed on a clean stop. A host-launched service
 * stops itself `serve.idle_shutdown_seconds` after its last client left; a user-launched one runs
 * until `hermit stop DIR` or a signal.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import process from "node:process";
import { Exit, HermitError } from "../errors.ts";
import { log } from "../log.ts";
import type { Manifest } from "../manifest/types.ts";
import { Gateway } from "../mcp/gateway.ts";
import { startupWaitMs } from "../mcp/session.ts";
import { serveHttp } from "../platform/http.ts";
import { processStartTime } from "../platform/proc.ts";
import { stopAllGroups } from "../process/group.ts";
import { disableWatchdog, enableWatchdog } from "../process/supervisor.ts";
import { VERSION } from "../version.ts";
import { checkEndpoint, type Endpoint, readEndpoint, removeEndpoint, writeEndpoint } from "./endpoint.ts";
import { createHandler, loopbackHosts, MCP_PATH } from "./http_handler.ts";
import { DEFAULT_TIMINGS, SessionRegistry, type SessionTimings } from "./sessions.ts";

export interface ServiceOptions {
  /** Interface to bind; 127.0.0.1 unless asked. */
  host: string;
  port: number;
  /** Read the token from this file instead of generating one (required off loopback). */
  tokenFile?: string;
  allowedHosts: string[];
  allowedOrigins: string[];
  /** Started by a relay: stop after the idle period once the last client is gone. */
  hostLaunched: boolean;
  timings?: SessionTimings;
  /** Called with the endpoint once the service answers (the CLI prints it). */
  onReady?: (ep: Endpoint) => void;
}

const isLoopback = (h: string) => loopbackHosts().includes(h) || h.startsWith("127.");

export async function runService(manifest: Manifest, opts: ServiceOptions): Promise<number> {
  const existing = readEndpoint(manifest.dir);
  if (existing && existing.pid !== process.pid && (await checkEndpoint(existing)).live) {
    throw new HermitError(
      `a service for ${manifest.name} is already running at ${existing.url} (pid ${existing.pid}); stop it with 'hermit stop ${manifest.dir}'`,
      Exit.usage,
    );
  }
  const loopback = isLoopback(opts.host);
  if (!loopback && !opts.tokenFile) {
    throw new HermitError(
      `binding ${opts.host} (not loopback) needs --token-file: a file holding the bearer token clients must send`,
      Exit.usage,
    );
  }
  const token = opts.tokenFile ? readToken(opts.tokenFile) : randomBytes(32).toString("base64url");
  if (!loopback) {
    log.warn(
      `listening on ${opts.host} without TLS: put a TLS-terminating proxy in front, or keep it on a private network`,
    );
  }

  enableWatchdog();
  const gateway = new Gateway(manifest);
  await gateway.start(startupWaitMs());
  gateway.logSelfCheck();
  const sessions = new SessionRegistry(gateway, opts.timings ?? DEFAULT_TIMINGS);
  const started = Date.now();

  let stop!: (why: string) => void;
  const stopped = new Promise<string>((resolve) => (stop = resolve));
  const handler = createHandler(
    {
      token,
      allowedHosts: loopback ? loopbackHosts() : opts.allowedHosts.map((h) => h.toLowerCase()),
      allowedOrigins: opts.allowedOrigins,
    },
    {
      health: () => ({
        status:
          [...gateway.upstreams.values()].every((u) => u.state === "connected" || u.state === "recycled")
            ? "ok"
            : "degraded",
        adapter: manifest.name,
        version: VERSION,
        pid: process.pid,
        uptime_s: Math.round((Date.now() - started) / 1000),
        clients: sessions.count,
        host_launched: opts.hostLaunched,
        tools: gateway.listTools().length,
        upstreams: [...gateway.upstreams.values()].map((u) => u.status()),
      }),
      mcp: (req, body) => sessions.handle(req, body),
      stop: () => stop("stop requested"),
    },
  );
  const server = await serveHttp(opts.host, opts.port, handler);
  const urlHost = loopback
    ? "127.0.0.1"
    : opts.host === "0.0.0.0" || opts.host === "::"
    ? "localhost"
    : opts.host;
  const ep: Endpoint = {
    url: `http://${urlHost.includes(":") ? `[${urlHost}]` : urlHost}:${server.port}${MCP_PATH}`,
    token,
    pid: process.pid,
    process_start: processStartTime(process.pid),
    started_at: new Date(started).toISOString(),
    version: VERSION,
    host_launched: opts.hostLaunched,
  };
  writeEndpoint(manifest.dir, ep);
  log.info(`serving ${manifest.name} at ${ep.url} (pid ${process.pid}, ${gateway.listTools().length} tools)`);
  opts.onReady?.(ep);

  const idleMs = manifest.serve.idleShutdownSeconds * 1000;
  let idleTimer: ReturnType<typeof setTimeout> | undefined;
  const armIdle = (count: number) => {
    clearTimeout(idleTimer);
    if (!opts.hostLaunched || count > 0) return;
    idleTimer = setTimeout(() => stop(`no client for ${manifest.serve.idleShutdownSeconds} s`), idleMs);
  };
  sessions.onCountChange(armIdle);
  armIdle(0);
  for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
    process.once(sig, () => stop(`received ${sig}`));
  }

  const why = await stopped;
  log.info(`stopping: ${why}`);
  clearTimeout(idleTimer);
  removeEndpoint(manifest.dir);
  await sessions.closeAll();
  await server.close().catch(() => {});
  await gateway.stop();
  await stopAllGroups();
  await disableWatchdog();
  return Exit.ok;
}

function readToken(file: string): string {
  let token: string;
  try {
    token = readFileSync(file, "utf8").trim();
  } catch (err) {
    throw new HermitError(
      `--token-file ${file}: cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"})`,
      Exit.usage,
    );
  }
  if (token.length < 16) {
    throw new HermitError(`--token-file ${file}: the token must be at least 16 characters`, Exit.usage);
  }
  return token;
}
