/**
 * The gateway: the one choke point between hosts and the adapter's tools. It owns the upstream
 * connections and the command tools, serves the catalog (exactly `exports.tools`, in that order),
 * and sends every call through the gate stack: screening and the kill switch at load, the trust
 * gate before a call, sanitization of every result, limits on server-to-client requests. Every
 * entry path (stdio serve, the HTTP service, `hermit call`) calls `callTool` here.
 * Transport-agnostic: hosts are `SessionPeer`s.
 */
import process from "node:process";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type {
  CallToolResult,
  LoggingLevel,
  ServerCapabilities,
  Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { mcpMessageOf } from "../errors.ts";
import { SAFE_MODE_NOTICE, safeMode } from "../gates/safe_mode.ts";
import { HERMIT_META_PREFIX, sanitizeErrorMessage, sanitizeResult } from "../gates/sanitize.ts";
import { type ScanFinding, scanText } from "../gates/scan.ts";
import { type Refusal, refusalLine, screenManifest } from "../gates/screen_manifest.ts";
import { needsApproval } from "../gates/trust.ts";
import { log } from "../log.ts";
import type { CommandTool, Manifest, Upstream } from "../manifest/types.ts";
import { CommandRefused, runCommandTool } from "./command_tool.ts";
import { activeSources } from "./catalog.ts";
import { ToolSlots } from "./tool_slots.ts";
import { capabilitiesOf, Catalog, type CatalogEntry, type SelfCheck } from "./gateway_catalog.ts";
import { ContentRouter } from "./gateway_content.ts";
import { askApproval, type CallContext, ServerRequests, type SessionPeer } from "./gateway_requests.ts";
import { defaultSchemaCache, type SchemaCache } from "./schema_cache.ts";
import { UpstreamConnection, type UpstreamOwner, type UpstreamStatus } from "./upstream.ts";
import { type Clock, realClock } from "./upstream_lifecycle.ts";
import type { UpstreamTool } from "./upstream_tools.ts";
import type { BuiltTransport } from "./upstream_transport.ts";
import type { SandboxHost } from "../sandbox/host.ts";
import { Transports } from "./gateway_transports.ts";
import { LockGate, type LockMode } from "../lock/gate.ts";
import type { Withheld } from "../lock/verdict.ts";
import { shellQuote } from "../platform/shell_quote.ts";

export type { CallContext, SessionPeer } from "./gateway_requests.ts";
export type { CatalogEntry } from "./gateway_catalog.ts";

export interface GatewayOptions {
  env?: Readonly<Record<string, string | undefined>>;
  cwd?: string;
  platform?: NodeJS.Platform;
  /** How upstream stderr lines are logged (default info). */
  stderrLevel?: "info" | "debug";
  clock?: Clock;
  /** The schema cache; default `<state dir>/schema-cache`, `null` for none. */
  schemaCache?: SchemaCache | null;
  /** Tests: open upstream transports in process instead of spawning or dialing. */
  transportFactory?: (u: Upstream) => Transport;
  /** hermit.lock: `enforce` (default), `pin` (locked versions, nothing withheld), `off`. */
  lock?: LockMode;
}

export interface CallOutcome {
  result: CallToolResult;
  /** True when a policy (trust approval) refused the call: `hermit call` exits 4. */
  refused: boolean;
}

/** Marks a result refused by policy (hermit call exits 4 on it). */
export const REFUSED_META = `${HERMIT_META_PREFIX}refused`;

type ChangeKind = "tools" | "prompts" | "resources";

/** An upstream as `liveUpstreams` describes it. */
export interface LiveUpstream {
  name: string;
  connected: boolean;
  lastError?: string;
  tools: readonly UpstreamTool[];
  serverInfo?: { name: string; version: string };
  pid?: number;
}

export class Gateway {
  readonly manifest: Manifest;
  readonly refusals: Refusal[];
  readonly safeMode: boolean;
  /** The upstream connections and the command tools: reached only through this class's methods. */
  readonly #upstreams = new Map<string, UpstreamConnection>();
  readonly #commandTools = new Map<string, CommandTool>();
  readonly #requests: ServerRequests;
  readonly content = new ContentRouter(() => this.#upstreams.values());
  readonly #schemaCache?: SchemaCache;
  /** hermit.lock (gate 9): what it withholds, and the package versions it pins at spawn. */
  readonly lock: LockGate;
  /** A bound on command-tool processes running at once (serve.max_tool_processes). */
  readonly #toolSlots: ToolSlots;
  readonly #catalog: Catalog;
  readonly #opts: GatewayOptions;
  readonly #env: Readonly<Record<string, string | undefined>>;
  readonly #listeners = new Set<(kind: ChangeKind) => void>();
  /** The host sessions attached right now (for log messages and resource updates). */
  readonly #sessions = new Set<SessionPeer>();
  readonly #reported = new Set<string>();
  /** One OAuth provider per `auth: oauth` upstream, kept across reconnects. */
  readonly #transports: Transports;

  constructor(manifest: Manifest, opts: GatewayOptions = {}) {
    this.manifest = manifest;
    this.#opts = opts;
    this.#env = opts.env ?? process.env;
    this.lock = new LockGate(manifest.dir, {
      mode: opts.lock ?? "enforce",
      acceptWith: `hermit lock ${shellQuote(manifest.dir)}`,
      onChange: () => this.#emit("tools"),
    });
    this.#transports = new Transports(manifest, { ...opts, env: this.#env, pin: (u) => this.lock.pinFor(u) });
    this.#toolSlots = new ToolSlots(manifest.serve.maxToolProcesses);
    const platform = opts.platform ?? process.platform;
    this.#schemaCache = opts.schemaCache === null ? undefined : opts.schemaCache ??
      defaultSchemaCache(manifest.dir, platform, this.#env);
    this.safeMode = safeMode(this.#env);
    this.refusals = screenManifest(manifest);
    this.#requests = new ServerRequests((server) => this.#upstreams.get(server)?.config);
    this.#catalog = new Catalog(
      {
        manifest,
        commandTools: this.#commandTools,
        upstreams: this.#upstreams,
        refusals: this.refusals,
        safeMode: this.safeMode,
        lock: this.lock,
      },
      (where, findings) => this.#reportScan(where, findings),
      (name, sources) =>
        this.#once(
          `collision:${name}`,
          () =>
            log.error(
              `'${name}' is provided by ${sources.join(" and ")}; neither is served until one is renamed`,
            ),
        ),
    );
    if (this.safeMode) {
      log.warn(SAFE_MODE_NOTICE);
      return;
    }
    for (const r of this.refusals) log.error(refusalLine(r));
    const active = activeSources(manifest, this.refusals.map((r) => r.where), false);
    const owner = this.#upstreamOwner(opts.clock ?? realClock);
    for (const u of active.upstreams) this.#upstreams.set(u.name, new UpstreamConnection(u, owner));
    for (const t of active.commandTools) this.#commandTools.set(t.name, t);
  }

  /**
   * Start the upstreams: a `lazy` one with a fresh schema-cache entry only loads its tool list;
   * the others connect. Resolves when those have answered or failed, or after `waitMs`.
   */
  async start(waitMs = 30_000): Promise<void> {
    this.lock.watch();
    const connecting: Promise<void>[] = [];
    for (const u of this.#upstreams.values()) {
      const cached = u.config.lazy ? this.#schemaCache?.get(u.config) : undefined;
      if (cached) u.startFromCache(cached);
      else connecting.push(u.start());
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([Promise.allSettled(connecting), new Promise((r) => (timer = setTimeout(r, waitMs)))]);
    clearTimeout(timer);
    for (const u of this.#upstreams.values()) {
      if (u.instructions) {
        this.#reportScan(`mcp_servers.${u.name}`, scanText("initialize.instructions", u.instructions));
      }
    }
    // prompts are scanned when listed: list them now, so check and tools see the findings
    if (this.capabilities().prompts) await this.content.listPrompts(true).catch(() => {});
  }

  async stop(): Promise<void> {
    this.lock.stop();
    await Promise.all([...this.#upstreams.values()].map((u) => u.stop()));
    await this.sandbox.close();
  }

  /** Why hermit.lock withholds the exported tool `name` right now, if it does. */
  withheld(name: string): Withheld | undefined {
    return this.#catalog.withheld(name);
  }

  /** The sandbox every child starts in (what it enforces, per entry: `tools`, `check`). */
  get sandbox(): SandboxHost {
    return this.#transports.sandbox;
  }

  /** A host session starts using the gateway; the returned function detaches it. */
  attach(peer: SessionPeer): () => void {
    this.#sessions.add(peer);
    return () => {
      this.#sessions.delete(peer);
      this.content.forget(peer);
    };
  }

  /** `logging/setLevel` from a host: remembered for that session and passed to the upstreams that log. */
  async setLogLevel(peer: SessionPeer, level: LoggingLevel): Promise<void> {
    peer.logLevel = level;
    await Promise.all(
      [...this.#upstreams.values()].filter((u) => u.capabilities?.logging && u.state === "connected").map((
        u,
      ) => u.withClient((c) => c.setLoggingLevel(level)).catch(() => {})),
    );
  }

  onChange(listener: (kind: ChangeKind) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #emit(kind: ChangeKind): void {
    for (const l of this.#listeners) l(kind);
  }

  #reportScan(where: string, findings: ScanFinding[]): void {
    for (const f of findings) {
      this.#once(
        `scan:${where}:${f.where}:${f.rule}`,
        () => log.warn(`scan: ${where} ${f.where}: ${f.rule}: "${f.excerpt}"`),
      );
    }
  }

  #once(key: string, fn: () => void): void {
    if (this.#reported.has(key)) return;
    this.#reported.add(key);
    fn();
  }

  /** The advertised tools: `exports.tools` order, only those something provides right now. */
  catalog(): CatalogEntry[] {
    return this.#catalog.entries();
  }

  listTools(): Tool[] {
    return this.catalog().map((e) => e.tool);
  }

  /** Each upstream's state, for `status`, `/health` and why a tool is not served. */
  /**
   * What each upstream runs right now, for `hermit lock` and the catalog test: lazy ones started
   * first (a cached listing is not what runs). Facts about each connection, never the connection.
   */
  async liveUpstreams(): Promise<LiveUpstream[]> {
    await Promise.all([...this.#upstreams.values()].filter((u) => u.fromCache).map((u) => u.start()));
    return [...this.#upstreams.values()].map((u) => ({
      name: u.name,
      connected: u.state === "connected",
      lastError: u.lastError,
      tools: u.tools,
      serverInfo: u.serverInfo,
      pid: u.pid,
    }));
  }

  upstreamStatus(): UpstreamStatus[] {
    return [...this.#upstreams.values()].map((u) => u.status());
  }

  capabilities(): ServerCapabilities {
    return capabilitiesOf(this.manifest, this.#upstreams.values());
  }

  async callTool(
    name: string,
    args: Record<string, unknown>,
    ctx: CallContext = {},
  ): Promise<CallToolResult> {
    return (await this.callToolDetailed(name, args, ctx)).result;
  }

  async callToolDetailed(
    name: string,
    args: Record<string, unknown>,
    ctx: CallContext = {},
  ): Promise<CallOutcome> {
    const entry = this.#catalog.find(name);
    const withheld = entry ? undefined : this.#catalog.withheld(name);
    if (withheld) return refusedOutcome(`refused: ${withheld.line}`);
    if (!entry) throw new UnknownTool(name, this.manifest.exports.tools.includes(name));
    const { source } = entry;
    if (source.kind === "command") {
      try {
        return {
          result: sanitizeResult(
            await this.#toolSlots.run(
              name,
              () => runCommandTool(source.tool, args, this.#transports.commandContext(), ctx.signal),
            ),
          ),
          refused: false,
        };
      } catch (err) {
        if (!(err instanceof CommandRefused)) throw err;
        return refusedOutcome(err.message);
      }
    }
    const upstream = this.#upstreams.get(source.server)!;
    // the trust gate comes before anything touches the upstream, a lazy spawn included
    if (needsApproval(entry.trust, entry.readOnly)) {
      const refusal = await askApproval(upstream.config, name, args, ctx);
      if (refusal) return refusedOutcome(refusal);
    }
    const release = this.#requests.enter(source.server, ctx);
    try {
      const result = await upstream.callTool(source.raw, args, {
        signal: ctx.signal,
        onprogress: ctx.onprogress,
        readOnly: entry.readOnly,
      });
      return { result: sanitizeResult(result), refused: false };
    } catch (err) {
      return {
        result: {
          isError: true,
          content: [{
            type: "text",
            text: sanitizeErrorMessage(mcpMessageOf(err)),
          }],
        },
        refused: false,
      };
    } finally {
      release();
    }
  }

  /** Names exported but not provided, and upstream tools offered but not exported. */
  selfCheck(): SelfCheck {
    return this.#catalog.selfCheck();
  }

  logSelfCheck(): void {
    const { missing, unexported } = this.selfCheck();
    for (const m of missing) {
      log.warn(`exports.tools lists '${m.name}', but it is not served: ${m.why}`, {
        kind: "not-served",
        tool: m.name,
        why: m.why,
      });
    }
    for (const u of unexported) {
      log.info(
        `mcp_servers.${u.server} offers '${u.raw}'${
          u.exported !== u.raw ? ` (as '${u.exported}')` : ""
        }, which exports.tools does not list; not reachable`,
      );
    }
  }

  /** What each upstream connection gets from the gateway; not reachable from outside. */
  #upstreamOwner(clock: Clock): UpstreamOwner {
    return {
      clock,
      schemaCache: this.#schemaCache,
      openTransport: (u: Upstream): BuiltTransport => this.#transports.open(u),
      credentialsStamp: (u: Upstream) => this.#transports.credentialsStamp(u),
      onToolsChanged: () => this.#emit("tools"),
      onPromptsChanged: () => this.#emit("prompts"),
      onResourcesChanged: () => this.#emit("resources"),
      onStderrLine: (server, line) => {
        const text = `[${server}] ${line}`;
        if ((this.#opts.stderrLevel ?? "info") === "info") log.info(text);
        else log.debug(text);
      },
      handleServerRequest: (server, method, params, signal) =>
        this.#requests.handle(server, method, params, signal),
      onNotification: (server, method, params) => {
        if (method === "notifications/resources/updated") this.content.updated(params);
        else this.#requests.route(server, method, params, this.#sessions);
      },
    };
  }
}

/** A call refused by policy: an error result marked for `hermit call` (exit 4), added after sanitization. */
function refusedOutcome(text: string): CallOutcome {
  return {
    result: { isError: true, content: [{ type: "text", text }], _meta: { [REFUSED_META]: true } },
    refused: true,
  };
}

export class UnknownTool extends Error {
  constructor(readonly tool: string, readonly exported: boolean) {
    super(exported ? `tool '${tool}' is exported but not available right now` : `unknown tool '${tool}'`);
    this.name = "UnknownTool";
  }
}
