/**
 * One upstream MCP server and its life, as the gateway holds it: connect (with a duplicate-spawn
 * guard and a connect cooldown of min(30·2^(n-1), 600) s after failures, so a dead server is never
 * respawned in a storm), discover its tools (paginated, filtered, renamed, written through to the
 * schema cache), start lazily from that cache, refresh when `list_changed` arrives or the list's
 * `ttlMs` runs out, keep HTTP connections alive with `ping`, recycle idle or old stdio servers, and
 * reconnect with jittered backoff when a live connection drops — decided from its transport's own
 * close, never from an error's wording, and closing what dropped. A stop during a connect closes
 * what the connect opened and stays stopped. An OAuth upstream that needs a login says so in one
 * line and reconnects as soon as its stored login changes (`hermit login` elsewhere). Timers run on
 * the owner's injected clock. This class ties the parts together: the life as a pure state machine
 * (`upstream_state.ts`) and its driver, which holds the links (`upstream_driver.ts`); one connect
 * attempt and its redacted failure line (`upstream_attempt.ts`); calls, counted in flight and at
 * most once for tools not believed read-only (`upstream_calls.ts`); the tool list
 * (`upstream_listing.ts`); the timers of a live link (`upstream_lifecycle.ts`).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult, ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { messageOf } from "../errors.ts";
import { redactCredentials } from "../gates/redact.ts";
import { log } from "../log.ts";
import type { Upstream } from "../manifest/types.ts";
import type { CacheEntry } from "./schema_cache.ts";
import type { GroupStdioTransport } from "./stdio_transport.ts";
import { connectAttempt } from "./upstream_attempt.ts";
import { type ClientHooks, hooksToOwner, type Link, openLink, probe } from "./upstream_client.ts";
import { type CallOptions, UpstreamCalls } from "./upstream_calls.ts";
import { LifeDriver } from "./upstream_driver.ts";
import { UpstreamLifecycle } from "./upstream_lifecycle.ts";
import { ToolListing } from "./upstream_listing.ts";
import { type Admission, admit, type Life, lifeStatus, type UpstreamState } from "./upstream_state.ts";
import type { UpstreamTool } from "./upstream_tools.ts";
import {
  failureNotice,
  unavailable,
  type UpstreamOwner,
  type UpstreamStatus,
  type UpstreamUnavailable,
} from "./upstream_types.ts";
import { LoginWatch } from "./oauth/login_watch.ts";

export { OutcomeUncertain } from "./upstream_calls.ts";
export type { UpstreamState } from "./upstream_state.ts";
export { type UpstreamOwner, type UpstreamStatus, UpstreamUnavailable } from "./upstream_types.ts";

export class UpstreamConnection {
  readonly config: Upstream;
  readonly #owner: UpstreamOwner;
  /** The life (state machine) and the links it is about. */
  readonly #driver: LifeDriver;
  #connecting: Promise<Client> | undefined;
  #capabilities: ServerCapabilities | undefined;
  #instructions: string | undefined;
  #refreshing: Promise<void> = Promise.resolve();
  readonly #timers: UpstreamLifecycle;
  readonly #calls: UpstreamCalls;
  readonly #listing: ToolListing;
  /** Armed by a `NeedsLogin` failure: the next attempt comes as soon as the stored login changes. */
  readonly #login: LoginWatch;
  /** What each client tells this connection and its owner. */
  readonly #clientHooks: ClientHooks;

  constructor(config: Upstream, owner: UpstreamOwner) {
    this.config = config;
    this.#owner = owner;
    this.#listing = new ToolListing(config, {
      clock: owner.clock,
      cache: owner.schemaCache,
      changed: () => owner.onToolsChanged(config.name),
      expired: () => void (this.state === "connected" ? this.refreshTools() : this.start()),
    });
    this.#login = new LoginWatch(owner.clock, () => owner.credentialsStamp?.(config), () => {
      log.info(`mcp_servers.${this.name}: its stored login changed; connecting`);
      void this.start();
    });
    this.#clientHooks = hooksToOwner(config, owner, () => void this.refreshTools());
    this.#timers = new UpstreamLifecycle(config, owner.clock, {
      busy: () => this.#calls.busy,
      recycle: (why) => this.#recycle(why),
      ping: () => this.#keepalive(),
    });
    this.#calls = new UpstreamCalls(config, {
      connect: () => this.ensureConnected(),
      live: () => this.#driver.live,
      lost: (link) => this.#linkLost(link),
      ended: () => this.#timers.activity(),
    });
    this.#driver = new LifeDriver(owner.clock, {
      wentLive: () => {
        this.#login.stop();
        this.#timers.connected();
      },
      wentDown: () => this.#timers.disconnected(),
      connect: () => void this.start(),
      awaitLogin: () => this.#login.arm(),
    });
  }

  get #life(): Life {
    return this.#driver.life;
  }

  get name(): string {
    return this.config.name;
  }
  get state(): UpstreamState {
    return this.#life.state;
  }
  get tools(): readonly UpstreamTool[] {
    return this.#listing.tools;
  }
  get capabilities(): ServerCapabilities | undefined {
    return this.#capabilities;
  }
  get instructions(): string | undefined {
    return this.#instructions;
  }
  /** What the server called itself in `initialize` (while connected). */
  get serverInfo(): { name: string; version: string } | undefined {
    return this.#driver.live?.client.getServerVersion();
  }
  get lastError(): string | undefined {
    return this.#life.lastError;
  }
  /** While connecting: what it waits for, when known (another hermit's refresh of its OAuth login). */
  get waitingFor(): string | undefined {
    return this.state === "connecting" ? this.#owner.waitingFor?.(this.config) : undefined;
  }
  get pid(): number | undefined {
    return (this.#driver.live?.transport as GroupStdioTransport | undefined)?.pid;
  }
  /** True while the tool list comes from the schema cache, not a live listing. */
  get fromCache(): boolean {
    return this.#listing.fromCache;
  }

  status(): UpstreamStatus {
    return {
      name: this.name,
      transport: this.config.kind,
      tools: this.#listing.tools.length,
      pid: this.pid,
      cached: this.#listing.fromCache || undefined,
      ...lifeStatus(this.#life, this.#owner.clock.now()),
    };
  }

  /** Connect now (eager start); failures are recorded, not thrown. */
  async start(): Promise<void> {
    await this.ensureConnected().catch(() => {});
  }

  /** A lazy start: take the tool list from a fresh cache entry without starting anything. */
  startFromCache(entry: CacheEntry): void {
    this.#capabilities = entry.capabilities;
    this.#instructions = entry.instructions;
    this.#listing.loadCache(entry);
    log.debug(
      `mcp_servers.${this.name}: ${this.#listing.tools.length} tools from the schema cache; starts on first use`,
    );
  }

  #unavailable(a: Exclude<Admission, { go: true }>): UpstreamUnavailable {
    return unavailable(this.name, this.#life, a);
  }

  /** The live client, connecting first if needed. Concurrent callers share one attempt. */
  ensureConnected(): Promise<Client> {
    if (this.#life.state === "connected" && this.#driver.live) {
      return Promise.resolve(this.#driver.live.client);
    }
    if (this.#connecting) return this.#connecting;
    const login = { waiting: this.#login.waiting, changed: this.#login.changed() };
    const admission = admit(this.#life, this.#owner.clock.now(), login);
    if (!admission.go) return Promise.reject(this.#unavailable(admission));
    const announce = this.#life.state === "recycled" || this.#listing.tools.length > 0 ||
      this.#life.failures > 0;
    this.#driver.dispatch({ type: "connect" });
    const attempt = this.#attempt(this.#life.epoch, announce).finally(() => {
      if (this.#connecting === attempt) this.#connecting = undefined;
    });
    this.#connecting = attempt;
    return attempt;
  }

  /** Throws when the upstream was stopped (or the attempt superseded) since `epoch` began. */
  #stillWanted(epoch: number): void {
    if (this.#life.epoch !== epoch) throw this.#unavailable({ go: false, why: "stopped" });
  }

  /** One connect attempt (`upstream_attempt.ts`); what it opened is taken in its epoch. */
  async #attempt(epoch: number, announce: boolean): Promise<Client> {
    const before = this.#listing.tools;
    const outcome = await connectAttempt({
      config: this.config,
      open: () => openLink(this.config, this.#owner, this.#clientHooks, (l) => this.#linkLost(l)),
      links: this.#driver,
      list: (client, capabilities) => this.#listing.fetch(client, capabilities),
      stillWanted: () => this.#stillWanted(epoch),
    }, ({ link, describe, capabilities, instructions, listed }) => {
      this.#capabilities = capabilities;
      this.#instructions = instructions;
      this.#listing.apply(listed, { capabilities, instructions });
      this.#driver.dispatch({ type: "opened", epoch }, link);
      log.debug(`mcp_servers.${this.name}: connected (${describe}), ${this.#listing.tools.length} tools`);
      if (announce) this.#listing.announceSince(before);
      return link.client;
    });
    if (outcome.ok) return outcome.taken;
    const { kind, why } = outcome;
    this.#driver.dispatch({ type: "failed", epoch, now: this.#owner.clock.now(), error: why, kind });
    this.#stillWanted(epoch);
    const notice = failureNotice(this.name, outcome, this.#life.failures);
    log[notice.level](notice.line, { kind: "upstream-failed", server: this.name, reason: why });
    throw notice.error;
  }

  /** A link's transport closed or could not deliver: if it was the live one, reconnect. */
  #linkLost(link: Link): void {
    if (link !== this.#driver.live || this.#life.state !== "connected") return;
    log.warn(`mcp_servers.${this.name}: connection lost; reconnecting`);
    this.#driver.dispatch({ type: "lost" });
  }

  /** Re-list tools (after list_changed or a TTL); tells the owner when the set changed. */
  refreshTools(): Promise<void> {
    this.#refreshing = this.#refreshing.then(async () => {
      const link = this.#driver.live;
      if (!link || this.#life.state !== "connected") return;
      const before = this.#listing.tools;
      let listed;
      try {
        listed = await this.#listing.fetch(link.client, this.#capabilities);
      } catch (err) {
        log.warn(`mcp_servers.${this.name}: refreshing tools failed: ${redactCredentials(messageOf(err))}`);
        return;
      }
      if (link !== this.#driver.live) return; // stopped, recycled or lost meanwhile
      this.#listing.apply(listed, { capabilities: this.#capabilities, instructions: this.#instructions });
      this.#listing.announceSince(before);
    });
    return this.#refreshing;
  }

  #recycle(why: string): void {
    if (this.#life.state !== "connected" || this.#calls.busy) return;
    log.info(`mcp_servers.${this.name}: recycled (${why}); it restarts on the next call`);
    this.#driver.dispatch({ type: "recycle" });
  }

  async #keepalive(): Promise<void> {
    const link = this.#driver.live;
    if (!link || this.#calls.busy) return;
    const why = await probe(link.client, !!this.#capabilities?.tools);
    if (why) this.#dropped(link, why);
  }

  /** Close a link that stopped answering; its transport's close brings the reconnect. */
  #dropped(link: Link, why: string): void {
    log.warn(`mcp_servers.${this.name}: ${redactCredentials(why)}`);
    void link.close();
  }

  /** Run `fn` with a live client, counting it as in flight (recycling waits for it). */
  withClient<T>(fn: (client: Client) => Promise<T>): Promise<T> {
    return this.#calls.withLink((link) => fn(link.client));
  }

  /** Call a tool by its raw name, at most once unless it is believed read-only (`upstream_calls.ts`). */
  callTool(
    raw: string,
    args: Record<string, unknown>,
    opts: CallOptions,
  ): Promise<CallToolResult> {
    return this.#calls.callTool(raw, args, opts);
  }

  async stop(): Promise<void> {
    const closing = this.#driver.stop();
    this.#login.stop();
    this.#timers.disconnected();
    this.#listing.stop();
    await closing;
  }
}
