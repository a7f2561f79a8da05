/**
 * `hermit serve DIR --standalone`: the shared service. One gateway (one set of upstream processes)
 * behind Streamable HTTP on 127.0.0.1, a session per client, a fresh bearer token per launch,
 * `DIR/.serve/endpoint` written atomically once the upstreams have started and removed on a clean
 * stop. The port is bound first, so a port in use is reported before anything starts; MCP requests
 * that come before the upstreams are up wait for them. A host-launched service stops itself
 * `serve.idle_shutdown_seconds` after its last active client left; a user-launched one runs until
 * `hermit stop DIR` or a signal. Stopping drains (drain.ts): the endpoint file goes, /health says
 * draining, calls in flight get `serve.drain_seconds` to finish, then the upstreams stop and the
 * service exits 0. Near the descriptor limit it drops idle connections; its log is capped.
 */
import { randomBytes } from "node:crypto";
import process from "node:process";
import { Exit, HermitError } from "../errors.ts";
import { log } from "../log.ts";
import type { Manifest } from "../manifest/types.ts";
import { Gateway } from "../mcp/gateway.ts";
import { startupWaitMs } from "../mcp/session.ts";
import { type Handler, type HttpServer, serveHttp } from "../platform/http.ts";
import { descriptorLimit, openDescriptors } from "../platform/descriptors.ts";
import { releaseWhenIdle } from "../platform/idle_release.ts";
import { processStartTime } from "../platform/proc.ts";
import { stopAllGroups } from "../process/group.ts";
import { STOP_SIGNALS } from "../process/host_end.ts";
import { disableWatchdog, enableWatchdog } from "../process/supervisor.ts";
import { rememberManifest } from "../relay/plan.ts";
import { VERSION } from "../version.ts";
import { readToken } from "./access.ts";
import { type Endpoint, logPath, removeEndpoint, writeEndpoint } from "./endpoint.ts";
import { drain, realClock } from "./drain.ts";
import { healthAnswer, type HealthFacts, liveAnswer, type Phase, upstreamView } from "./health.ts";
import { createHandler, loopbackHosts, MCP_PATH } from "./http_handler.ts";
import { alreadyRunningError, claimService, findService } from "./launch.ts";
import { capLog } from "./log_cap.ts";
import { SessionRegistry } from "./sessions.ts";

/** A POST's answer stays plain JSON this long at most before it becomes a stream. */
const JSON_WAIT_MS = 1000;
/** The reconnection delay priming events suggest. */
const RETRY_MS = 500;
/** Share of the descriptor limit past which idle connections are closed. */
const PRESSURE = 0.8;
const PRESSURE_CHECK_MS = 1000;

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
  /** Called with the endpoint once the service answers (the CLI prints it). */
  onReady?: (ep: Endpoint) => void;
}

const isLoopback = (h: string) => loopbackHosts().includes(h) || h.startsWith("127.");

/** The address clients on this machine use: the one bound, or localhost for a wildcard. */
function advertisedHost(bound: string): string {
  if (bound === "0.0.0.0" || bound === "::") return "localhost";
  return bound.includes(":") ? `[${bound}]` : bound;
}

export async function runService(manifest: Manifest, opts: ServiceOptions): Promise<number> {
  const existing = await findService(manifest.dir);
  if (existing) throw alreadyRunningError(manifest, existing);
  const loopback = isLoopback(opts.host);
  if (!loopback && !opts.tokenFile) {
    throw new HermitError(
      `binding ${opts.host} (not loopback) needs --token-file: a file holding the bearer token clients must send`,
      Exit.usage,
    );
  }
  const token = opts.tokenFile ? readToken(opts.tokenFile) : randomBytes(32).toString("base64url");
  // one service per adapter, however many start at once; given up when it starts to drain
  const claim = await claimService(manifest);
  const urlHost = advertisedHost(opts.host);
  const serve = manifest.serve;

  // the service outlives any one project: its workspace is the adapter directory, wherever it was
  // started from (HERMIT_WORKSPACE names another)
  // its tools must not read the token clients authenticate with (as `.serve/` is kept from them)
  const gateway = new Gateway(manifest, {
    cwd: manifest.dir,
    hermitSecrets: opts.tokenFile ? [opts.tokenFile] : [],
  });
  const sessions = new SessionRegistry(gateway, {
    maxSessions: serve.maxSessions,
    streamSeconds: serve.streamSeconds,
    jsonWaitMs: JSON_WAIT_MS,
    retryMs: RETRY_MS,
  });
  const started = Date.now();
  let phase: Phase = "starting";
  let upstreamsStarted!: () => void;
  const ready = new Promise<void>((resolve) => (upstreamsStarted = resolve));
  let stop!: (why: string) => void;
  const stopped = new Promise<string>((resolve) => (stop = resolve));
  const facts: HealthFacts = {
    get phase() {
      return phase;
    },
    get upstreamsUp() {
      return gateway.upstreamStatus().every((u) => u.state === "connected" || u.state === "recycled");
    },
    details: () => ({
      adapter: manifest.name,
      version: VERSION,
      pid: process.pid,
      uptime_s: Math.round((Date.now() - started) / 1000),
      clients: sessions.count,
      host_launched: opts.hostLaunched,
      tools: gateway.listTools().length,
      upstreams: gateway.upstreamStatus().map(upstreamView),
      drain_seconds: serve.drainSeconds,
      sessions: sessions.details(),
    }),
  };
  const listening: { server?: HttpServer } = {}; // the handler exists before the port
  const memory = releaseWhenIdle(process.env); // given back when no client has asked for a while
  const handler = createHandler(
    {
      token,
      // off loopback, the address this service advertises is always a Host it answers to
      allowedHosts: loopback
        ? [...new Set([...loopbackHosts(), urlHost.toLowerCase()])] // 127.0.0.2 is loopback too
        : opts.allowedHosts.length
        ? [...opts.allowedHosts.map((h) => h.toLowerCase()), urlHost]
        : [],
      allowedOrigins: opts.allowedOrigins,
      maxOpenRequests: serve.maxConnections,
    },
    {
      health: (operator) => healthAnswer(facts, operator),
      live: (operator) => liveAnswer(facts, operator),
      mcp: async (req, body) => {
        memory?.touch();
        await ready; // like a stdio session: the first tools/list is complete
        return sessions.handle(req, body);
      },
      stop: () => stop("stop requested"),
      openRequests: () => listening.server?.openRequests() ?? 0,
    },
  );
  const server = listening.server = await listen(opts.host, opts.port, handler);
  if (!loopback) {
    log.warn(
      `listening on ${opts.host} without TLS: put a TLS-terminating proxy in front, or keep it on a private network`,
    );
  }
  const stopPressure = relieveDescriptorPressure(server);

  enableWatchdog();
  await gateway.start(startupWaitMs());
  gateway.logSelfCheck();
  phase = "ready";
  upstreamsStarted();
  const ep: Endpoint = {
    url: `http://${urlHost}:${server.port}${MCP_PATH}`,
    token,
    pid: process.pid,
    process_start: processStartTime(process.pid),
    started_at: new Date(started).toISOString(),
    version: VERSION,
    host_launched: opts.hostLaunched,
  };
  writeEndpoint(manifest.dir, ep);
  await rememberManifest(manifest); // so the relays of this adapter take the fast path
  const stopLogCap = capLog(logPath(manifest.dir));
  log.info(`serving ${manifest.name} at ${ep.url} (pid ${process.pid}, ${gateway.listTools().length} tools)`);
  opts.onReady?.(ep);

  const idleMs = serve.idleShutdownSeconds * 1000;
  let idleTimer: ReturnType<typeof setTimeout> | undefined;
  const armIdle = (active: number) => {
    clearTimeout(idleTimer);
    if (!opts.hostLaunched || active > 0) return;
    idleTimer = setTimeout(() => stop(`no client for ${serve.idleShutdownSeconds} s`), idleMs);
  };
  sessions.onActiveChange(armIdle);
  armIdle(sessions.active);
  const hurry = new AbortController();
  for (const sig of STOP_SIGNALS) {
    process.on(sig, () => (phase === "draining" ? hurry.abort() : stop(`received ${sig}`)));
  }

  const why = await stopped;
  clearTimeout(idleTimer);
  memory?.stop();
  phase = "draining";
  removeEndpoint(manifest.dir); // new relays look elsewhere at once
  claim.release(); // and may start the next service while this one drains
  log.info(
    `stopping (${why}): draining; ${sessions.inFlight} request(s) in flight, waiting at most ${serve.drainSeconds} s`,
  );
  const outcome = await drain(sessions, serve.drainSeconds * 1000, realClock, hurry.signal);
  if (!outcome.finished) {
    log.warn(`drain: ${outcome.cut} request(s) still running after the wait; they are cut`);
  }
  stopPressure();
  stopLogCap();
  await server.close().catch(() => {});
  await gateway.stop();
  await stopAllGroups();
  await disableWatchdog();
  log.info("stopped");
  return Exit.ok;
}

/** Near the descriptor limit, idle keep-alive connections go first, so new clients get in. */
function relieveDescriptorPressure(server: HttpServer): () => void {
  const limit = descriptorLimit();
  if (!limit || openDescriptors() === undefined) return () => {};
  let warned = false;
  const timer = setInterval(() => {
    const open = openDescriptors() ?? 0;
    if (open < limit * PRESSURE) return void (warned = false);
    server.closeIdle();
    if (!warned) {
      log.warn(
        `${open === Infinity ? "all" : open} of ${limit} file descriptors open: closing idle connections`,
      );
    }
    warned = true;
  }, PRESSURE_CHECK_MS);
  (timer as { unref?: () => void }).unref?.();
  return () => clearInterval(timer);
}

/** Bind `host:port`; the OS refusing it is one line naming the address and the fix. */
async function listen(host: string, port: number, handler: Handler): Promise<HttpServer> {
  try {
    return await serveHttp(host, port, handler);
  } catch (err) {
    const where = `${host.includes(":") ? `[${host}]` : host}:${port}`;
    const fix: Record<string, string> = {
      EADDRINUSE:
        "the port is in use; choose another with --port (or serve.port), or stop what listens there",
      EADDRNOTAVAIL: "no interface of this machine has that address; check --host",
      EACCES: "not allowed to bind that port; choose one above 1023 with --port (or serve.port)",
    };
    const why = fix[(err as NodeJS.ErrnoException).code ?? ""];
    if (why) throw new HermitError(`cannot listen on ${where}: ${why}`, Exit.usage);
    throw err;
  }
}
