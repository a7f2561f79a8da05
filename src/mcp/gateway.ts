/**
 * The gateway: the one choke point between hosts and the adapter's tools. It owns the upstream
 * connections and the command tools, serves the catalog (exactly `exports.tools`, in that order),
 * and applies the gate stack, in this order: at load, screening (gate 1) and the kill switch (7);
 * where a child starts, its environment (2) and confinement (8, `gateway_transports.ts`); in the
 * catalog, hermit.lock (9) and the description scan (3, `gateway_catalog.ts`); on a call, a
 * withheld tool refused (9), the trust gate (5) before anything touches the upstream, its own
 * requests attributed, limited and sanitized while the call runs (6 and 4, `gateway_requests.ts`),
 * its progress and every result sanitized (4; the call's path in `gateway_calls.ts`, resources
 * and prompts in `gateway_content.ts`). Every entry path (stdio serve, the HTTP service,
 * `hermit call`) calls `callTool` here. Transport-agnostic: hosts are `SessionPeer`s;
 * what travels back to them is `gateway_events.ts`'s, an answer's shape `gateway_outcome.ts`'s.
 */
import process from "node:process";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type {
  CallToolResult,
  LoggingLevel,
  ServerCapabilities,
  Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { SAFE_MODE_NOTICE, safeMode } from "../gates/safe_mode.ts";
import { type Refusal, refusalLine, screenManifest } from "../gates/screen_manifest.ts";
import { log } from "../log.ts";
import type { CommandTool, Manifest, Upstream } from "../manifest/types.ts";
import { activeSources } from "./catalog.ts";
import { ToolSlots } from "./tool_slots.ts";
import { capabilitiesOf, Catalog, type CatalogEntry, type SelfCheck } from "./gateway_catalog.ts";
import { ContentRouter } from "./gateway_content.ts";
import { type ChangeKind, GatewayEvents } from "./gateway_events.ts";
import type { CallOutcome } from "./gateway_outcome.ts";
import { callThroughGates } from "./gateway_calls.ts";
import { type CallContext, ServerRequests, type SessionPeer } from "./gateway_requests.ts";
import { defaultSchemaCache, type SchemaCache } from "./schema_cache.ts";
import { UpstreamConnection } from "./upstream.ts";
import type { LiveUpstream, UpstreamOwner, UpstreamStatus } from "./upstream_types.ts";
import { type Clock, realClock } from "../platform/clock.ts";
import type { SandboxHost } from "../sandbox/host.ts";
import { Transports } from "./gateway_transports.ts";
import { LockGate, type LockMode } from "../lock/gate.ts";
import type { Withheld } from "../lock/verdict.ts";
import { shellQuote } from "../platform/shell_quote.ts";

export type { CallContext, SessionPeer } from "./gateway_requests.ts";
export type { CatalogEntry } from "./gateway_catalog.ts";
export { type CallOutcome, REFUSED_META, UnknownTool } from "./gateway_outcome.ts";
export type { LiveUpstream } from "./upstream_types.ts";

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
  /** Files no child may read: a service's `--token-file`. */
  hermitSecrets?: readonly string[];
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
  readonly #env: Readonly<Record<string, string | undefined>>;
  /** What the upstreams send towards the hosts, the sessions attached and the change listeners. */
  readonly #events: GatewayEvents;
  /** How children and upstreams are reached: command-tool context, transports, OAuth, the sandbox. */
  readonly #transports: Transports;
  /** What each upstream connection gets from the gateway (kept to start one anew). */
  #owner: UpstreamOwner | undefined;

  constructor(manifest: Manifest, opts: GatewayOptions = {}) {
    this.manifest = manifest;
    this.#env = opts.env ?? process.env;
    this.lock = new LockGate(manifest.dir, {
      mode: opts.lock ?? "enforce",
      acceptWith: `hermit lock ${shellQuote(manifest.dir)}`,
      onChange: () => {
        this.#startRefusedByLock();
        this.#events.emit("tools");
      },
    });
    this.#transports = new Transports(manifest, {
      ...opts,
      env: this.#env,
      pin: (u) => this.lock.pinFor(u),
      startRefusal: (u) => this.lock.startRefusal(u),
    });
    this.#toolSlots = new ToolSlots(manifest.serve.maxToolProcesses);
    const platform = opts.platform ?? process.platform;
    this.#schemaCache = opts.schemaCache === null ? undefined : opts.schemaCache ??
      defaultSchemaCache(manifest.dir, platform, this.#env);
    this.safeMode = safeMode(this.#env);
    this.refusals = screenManifest(manifest);
    this.#requests = new ServerRequests((server) => this.#upstreams.get(server)?.config);
    this.#events = new GatewayEvents(this.#requests, this.content, opts.stderrLevel ?? "info");
    this.#catalog = new Catalog({
      manifest,
      commandTools: this.#commandTools,
      upstreams: this.#upstreams,
      refusals: this.refusals,
      safeMode: this.safeMode,
      lock: this.lock,
    });
    if (this.safeMode) {
      log.warn(SAFE_MODE_NOTICE);
      return;
    }
    for (const r of this.refusals) log.error(refusalLine(r));
    const active = activeSources(manifest, this.refusals.map((r) => r.where), false);
    // what each upstream connection gets from the gateway: not reachable from outside
    const owner: UpstreamOwner = this.#owner = {
      clock: opts.clock ?? realClock,
      schemaCache: this.#schemaCache,
      openTransport: (u) => this.#transports.open(u),
      credentialsStamp: (u) => this.#transports.credentialsStamp(u),
      waitingFor: (u) => this.#transports.waitingFor(u),
      ...this.#events.fromUpstreams(),
    };
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
    this.#catalog.scanInstructions();
    // prompts and resources are scanned when listed: list them now, so check and tools see the findings
    const caps = this.capabilities();
    await Promise.all([
      caps.prompts ? this.content.listPrompts(true).catch(() => {}) : undefined,
      caps.resources ? this.content.listResources(true).catch(() => {}) : undefined,
      caps.resources ? this.content.listResourceTemplates(true).catch(() => {}) : undefined,
    ]);
  }

  /**
   * hermit.lock changed: the upstreams it kept from starting that it allows now start (a refusal
   * is final for a connection, so each gets a new one).
   */
  #startRefusedByLock(): void {
    if (!this.#owner) return;
    for (const config of this.lock.nowAllowed([...this.#upstreams.values()].map((u) => u.config))) {
      if (!this.#upstreams.get(config.name)?.status().refused) continue;
      const fresh = new UpstreamConnection(config, this.#owner);
      this.#upstreams.set(config.name, fresh);
      void fresh.start();
    }
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
    return this.#events.attach(peer);
  }

  /** `logging/setLevel` from a host: remembered for that session and passed to the upstreams that log. */
  async setLogLevel(peer: SessionPeer, level: LoggingLevel): Promise<void> {
    peer.logLevel = level;
    const logging = [...this.#upstreams.values()].filter((u) =>
      u.capabilities?.logging && u.state === "connected"
    );
    await Promise.all(logging.map((u) => u.withClient((c) => c.setLoggingLevel(level)).catch(() => {})));
  }

  /** Tell `listener` when the tools, prompts or resources the hosts see may have changed. */
  onChange(listener: (kind: ChangeKind) => void): () => void {
    return this.#events.onChange(listener);
  }

  /** The advertised tools: `exports.tools` order, only those something provides right now. */
  catalog(): CatalogEntry[] {
    return this.#catalog.entries();
  }

  listTools(): Tool[] {
    return this.catalog().map((e) => e.tool);
  }

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

  /** Each upstream's state, for `status`, `/health` and why a tool is not served. */
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
    return await callThroughGates(
      {
        manifest: this.manifest,
        catalog: this.#catalog,
        upstreams: this.#upstreams,
        requests: this.#requests,
        toolSlots: this.#toolSlots,
        commandContext: () => this.#transports.commandContext(),
      },
      name,
      args,
      ctx,
    );
  }

  /** Names exported but not provided, and upstream tools offered but not exported. */
  selfCheck(): SelfCheck {
    return this.#catalog.selfCheck();
  }

  /** The self-check in the log (at start). */
  logSelfCheck(): void {
    this.#catalog.logSelfCheck();
  }
}
