/**
 * One upstream MCP server and its life, driven by the pure state machine in `upstream_state.ts`:
 * connect (with a duplicate-spawn guard and a connect cooldown of min(30·2^(n-1), 600) s after
 * failures, so a dead server is never respawned in a storm), discover its tools (paginated,
 * filtered, renamed, written through to the schema cache), start lazily from that cache, refresh
 * when `list_changed` arrives or the list's `ttlMs` runs out, keep HTTP connections alive with
 * `ping`, recycle idle or old stdio servers, and reconnect with jittered backoff when a live
 * connection drops — decided from its transport's own close, never from an error's wording, and
 * closing what dropped. A stop during a connect closes what the connect opened and stays stopped.
 * Calls wait for a connection and are at-most-once for tools not believed read-only. An OAuth
 * upstream that needs a login says so in one line and reconnects as soon as its stored login
 * changes (`hermit login` elsewhere). Timers run on the owner's injected clock.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult, ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { messageOf } from "../errors.ts";
import { redactCredentials } from "../gates/sanitize.ts";
import { log } from "../log.ts";
import type { Upstream } from "../manifest/types.ts";
import type { CacheEntry } from "./schema_cache.ts";
import type { GroupStdioTransport } from "./stdio_transport.ts";
import {
  classifyFailure,
  type ClientHooks,
  Link,
  openLink,
  OutcomeUncertain,
  probe,
} from "./upstream_client.ts";
import type { BuiltTransport } from "./upstream_transport.ts";
import { jitteredBackoff, UpstreamLifecycle } from "./upstream_lifecycle.ts";
import { ToolListing } from "./upstream_listing.ts";
import {
  type Admission,
  admit,
  initialLife,
  type Life,
  type LifeAction,
  type LifeEvent,
  lifeStatus,
  step,
  type UpstreamState,
} from "./upstream_state.ts";
import type { UpstreamTool } from "./upstream_tools.ts";
import {
  failedToStartMessage,
  failureLogLine,
  unavailable,
  type UpstreamOwner,
  type UpstreamStatus,
  UpstreamUnavailable,
} from "./upstream_types.ts";
import { LoginWatch } from "./oauth/login_watch.ts";

export { OutcomeUncertain } from "./upstream_client.ts";
export type { UpstreamState } from "./upstream_state.ts";
export { type UpstreamOwner, type UpstreamStatus, UpstreamUnavailable } from "./upstream_types.ts";

type Progress = (p: { progress: number; total?: number; message?: string }) => void;

export class UpstreamConnection {
  readonly config: Upstream;
  readonly #owner: UpstreamOwner;
  #life: Life = initialLife;
  /** The connected link, while `connected`. */
  #live: Link | undefined;
  /** The link an attempt is opening, until it goes live or is discarded. */
  #opening: Link | undefined;
  #connecting: Promise<Client> | undefined;
  #capabilities: ServerCapabilities | undefined;
  #instructions: string | undefined;
  #inFlight = 0;
  #refreshing: Promise<void> = Promise.resolve();
  #retryTimer: unknown;
  readonly #timers: UpstreamLifecycle;
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
    this.#clientHooks = {
      onToolsChanged: () => void this.refreshTools(),
      onPromptsChanged: () => owner.onPromptsChanged(config.name),
      onResourcesChanged: () => owner.onResourcesChanged(config.name),
      request: (method, params, signal) => owner.handleServerRequest(config.name, method, params, signal),
      notification: (method, params) => owner.onNotification(config.name, method, params),
    };
    this.#timers = new UpstreamLifecycle(config, owner.clock, {
      busy: () => this.#inFlight > 0,
      recycle: (why) => this.#recycle(why),
      ping: () => this.#keepalive(),
    });
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
    return this.#live?.client.getServerVersion();
  }
  get lastError(): string | undefined {
    return this.#life.lastError;
  }
  get pid(): number | undefined {
    return (this.#live?.transport as GroupStdioTransport | undefined)?.pid;
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

  #dispatch(event: LifeEvent, attempt?: Link): void {
    const { life, actions } = step(this.#life, event);
    this.#life = life;
    for (const a of actions) this.#act(a, attempt);
  }

  #act(a: LifeAction, attempt: Link | undefined): void {
    switch (a.type) {
      case "discard-attempt": {
        const link = attempt ?? this.#opening;
        if (link === this.#opening) this.#opening = undefined;
        void link?.close();
        return;
      }
      case "go-live":
        this.#live = attempt;
        this.#opening = undefined;
        this.#login.stop();
        this.#timers.connected();
        return;
      case "close-live": {
        const link = this.#live;
        this.#live = undefined;
        this.#timers.disconnected();
        void link?.close();
        return;
      }
      case "schedule-retry":
        this.#clearRetry();
        this.#retryTimer = this.#owner.clock.setTimeout(() => {
          this.#retryTimer = undefined;
          this.#dispatch({ type: "retry-due" });
        }, jitteredBackoff(a.attempt));
        return;
      case "connect":
        void this.start();
        return;
      case "await-login":
        this.#login.arm();
        return;
    }
  }

  #clearRetry(): void {
    if (this.#retryTimer !== undefined) this.#owner.clock.clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
  }

  #unavailable(a: Exclude<Admission, { go: true }>): UpstreamUnavailable {
    return unavailable(this.name, this.#life, a);
  }

  /** The live client, connecting first if needed. Concurrent callers share one attempt. */
  ensureConnected(): Promise<Client> {
    if (this.#life.state === "connected" && this.#live) return Promise.resolve(this.#live.client);
    if (this.#connecting) return this.#connecting;
    const login = { waiting: this.#login.waiting, changed: this.#login.changed() };
    const admission = admit(this.#life, this.#owner.clock.now(), login);
    if (!admission.go) return Promise.reject(this.#unavailable(admission));
    const announce = this.#life.state === "recycled" || this.#listing.tools.length > 0 ||
      this.#life.failures > 0;
    this.#dispatch({ type: "connect" });
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

  async #attempt(epoch: number, announce: boolean): Promise<Client> {
    const before = this.#listing.tools;
    let link: Link | undefined;
    let explain: BuiltTransport["explain"];
    try {
      const opened = openLink(this.config, this.#owner, this.#clientHooks, (l) => this.#linkLost(l));
      link = opened.link;
      explain = opened.explain;
      const client = link.client;
      this.#opening = link;
      await client.connect(link.transport, { timeout: this.config.connectTimeoutSeconds * 1000 });
      this.#stillWanted(epoch);
      const capabilities = client.getServerCapabilities();
      const instructions = client.getInstructions();
      const listed = await this.#listing.fetch(client, capabilities);
      this.#stillWanted(epoch);
      this.#capabilities = capabilities;
      this.#instructions = instructions;
      this.#listing.apply(listed, { capabilities, instructions });
      this.#dispatch({ type: "opened", epoch }, link);
      log.debug(
        `mcp_servers.${this.name}: connected (${opened.describe}), ${this.#listing.tools.length} tools`,
      );
      if (announce) this.#listing.announceSince(before);
      return client;
    } catch (err) {
      if (this.#opening === link) this.#opening = undefined;
      const tail = (link?.transport as GroupStdioTransport | undefined)?.stderrTail?.slice(-3) ?? [];
      await link?.close();
      if (err instanceof UpstreamUnavailable) throw err; // stopped meanwhile
      return this.#failed(epoch, err, link, tail, explain);
    }
  }

  /** `explain`: the sandbox's reading of a start failure (it names the key that would open it). */
  #failed(
    epoch: number,
    err: unknown,
    link: Link | undefined,
    tail: string[],
    explain?: BuiltTransport["explain"],
  ): never {
    const failure = classifyFailure(err, { link, stderrTail: tail, oauth: this.config.auth === "oauth" });
    const kind = failure.kind;
    // redacted where it is made: it goes to the log, lastError, /health and every message after
    const why = redactCredentials(kind === "error" && explain ? explain(failure.why, tail) : failure.why);
    this.#dispatch({ type: "failed", epoch, now: this.#owner.clock.now(), error: why, kind });
    this.#stillWanted(epoch);
    const event = { kind: "upstream-failed", server: this.name, reason: why } as const;
    if (kind === "refused") {
      log.error(why, event);
      throw new UpstreamUnavailable(this.name, "refused", why);
    }
    if (kind === "needs-login") {
      log.warn(why, event);
      throw new UpstreamUnavailable(this.name, "needs-login", why);
    }
    log.warn(failureLogLine(this.name, why, this.#life.failures), event);
    throw new UpstreamUnavailable(this.name, "failed", failedToStartMessage(this.name, why));
  }

  /** A link's transport closed or could not deliver: if it was the live one, reconnect. */
  #linkLost(link: Link): void {
    if (link !== this.#live || this.#life.state !== "connected") return;
    log.warn(`mcp_servers.${this.name}: connection lost; reconnecting`);
    this.#dispatch({ type: "lost" });
  }

  /** Re-list tools (after list_changed or a TTL); tells the owner when the set changed. */
  refreshTools(): Promise<void> {
    this.#refreshing = this.#refreshing.then(async () => {
      const link = this.#live;
      if (!link || this.#life.state !== "connected") return;
      const before = this.#listing.tools;
      let listed;
      try {
        listed = await this.#listing.fetch(link.client, this.#capabilities);
      } catch (err) {
        log.warn(`mcp_servers.${this.name}: refreshing tools failed: ${redactCredentials(messageOf(err))}`);
        return;
      }
      if (link !== this.#live) return; // stopped, recycled or lost meanwhile
      this.#listing.apply(listed, { capabilities: this.#capabilities, instructions: this.#instructions });
      this.#listing.announceSince(before);
    });
    return this.#refreshing;
  }

  #recycle(why: string): void {
    if (this.#life.state !== "connected" || this.#inFlight > 0) return;
    log.info(`mcp_servers.${this.name}: recycled (${why}); it restarts on the next call`);
    this.#dispatch({ type: "recycle" });
  }

  async #keepalive(): Promise<void> {
    const link = this.#live;
    if (!link || this.#inFlight > 0) return;
    const why = await probe(link.client, !!this.#capabilities?.tools);
    if (why) this.#dropped(link, why);
  }

  /** Close a link that stopped answering; its transport's close brings the reconnect. */
  #dropped(link: Link, why: string): void {
    log.warn(`mcp_servers.${this.name}: ${redactCredentials(why)}`);
    void link.close();
  }

  async #withLink<T>(fn: (link: Link) => Promise<T>): Promise<T> {
    await this.ensureConnected();
    const link = this.#live!;
    this.#inFlight++;
    try {
      return await fn(link);
    } finally {
      this.#inFlight--;
      this.#timers.activity();
    }
  }

  /** Run `fn` with a live client, counting it as in flight (recycling waits for it). */
  withClient<T>(fn: (client: Client) => Promise<T>): Promise<T> {
    return this.#withLink((link) => fn(link.client));
  }

  /**
   * Call a tool by its raw name. When the connection is lost under the call, a read-only call is
   * retried once; any other is answered "outcome uncertain" (at most once). An error the server
   * answered is passed on as it is.
   */
  async callTool(
    raw: string,
    args: Record<string, unknown>,
    opts: { signal?: AbortSignal; onprogress?: Progress; readOnly: boolean },
  ): Promise<CallToolResult> {
    let used: Link | undefined;
    const call = (link: Link) => {
      used = link;
      return link.client.callTool({ name: raw, arguments: args }, undefined, {
        signal: opts.signal,
        timeout: this.config.callTimeoutSeconds * 1000,
        resetTimeoutOnProgress: true,
        onprogress: opts.onprogress,
      }) as Promise<CallToolResult>;
    };
    try {
      return await this.#withLink(call);
    } catch (err) {
      if (!used?.lost || opts.signal?.aborted) throw err;
      // do not wait for the transport to notice: the next attempt must not reuse this link
      this.#linkLost(used);
      if (!opts.readOnly) throw new OutcomeUncertain(this.name, raw);
      log.info(`mcp_servers.${this.name}: connection lost during read-only ${raw}; retrying once`);
      return await this.#withLink(call);
    }
  }

  async stop(): Promise<void> {
    const links = [this.#live, this.#opening];
    this.#dispatch({ type: "stop" });
    this.#clearRetry();
    this.#login.stop();
    this.#timers.disconnected();
    this.#listing.stop();
    await Promise.all(links.map((l) => l?.close()));
  }
}
