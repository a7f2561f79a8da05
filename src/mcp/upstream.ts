/**
 * One upstream MCP server and its life: connect (with a duplicate-spawn guard and a connect
 * cooldown of min(30·2^(n-1), 600) s after failures, so a dead server is never respawned in a
 * storm), discover its tools (paginated, filtered, renamed, written through to the schema cache),
 * start lazily from that cache, refresh when `list_changed` arrives or the list's `ttlMs` runs
 * out, keep HTTP connections alive with `ping`, recycle idle or old stdio servers, and reconnect
 * with jittered backoff when a live connection drops. Calls wait for a connection and are
 * at-most-once for tools that are not read-only. An OAuth upstream that needs a login says so in
 * one line and reconnects as soon as its stored login changes (`hermit login` elsewhere).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CallToolResult, ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { messageOf } from "../errors.ts";
import { log } from "../log.ts";
import type { Upstream } from "../manifest/types.ts";
import type { CacheEntry, SchemaCache } from "./schema_cache.ts";
import type { GroupStdioTransport } from "./stdio_transport.ts";
import { describeFailure, isConnectionLoss, newClient, OutcomeUncertain } from "./upstream_client.ts";
import { type Clock, cooldownSeconds, jitteredBackoff, UpstreamLifecycle } from "./upstream_lifecycle.ts";
import { ToolListing } from "./upstream_listing.ts";
import type { UpstreamTool } from "./upstream_tools.ts";
import { NeedsLogin } from "./oauth/errors.ts";
import { LoginWatch } from "./oauth/login_watch.ts";
import { type BuiltTransport, UpstreamRefused } from "./upstream_transport.ts";

export { OutcomeUncertain } from "./upstream_client.ts";

export type UpstreamState =
  | "idle"
  | "connecting"
  | "connected"
  | "reconnecting"
  | "cooldown"
  | "recycled"
  | "stopped";

/** What an upstream needs from whoever owns it (the gateway). */
export interface UpstreamOwner {
  readonly clock: Clock;
  readonly schemaCache?: SchemaCache;
  openTransport(u: Upstream): BuiltTransport;
  onToolsChanged(server: string): void;
  onPromptsChanged(server: string): void;
  onResourcesChanged(server: string): void;
  onStderrLine(server: string, line: string): void;
  /** Server-to-client requests (sampling, elicitation), answered by the gateway. */
  handleServerRequest(server: string, method: string, params: unknown, signal: AbortSignal): Promise<unknown>;
  /** Log messages and resource updates from the server. */
  onNotification(server: string, method: string, params: Record<string, unknown>): void;
  /** OAuth upstreams: a value that changes when the stored login does; undefined otherwise. */
  credentialsStamp?(u: Upstream): string | undefined;
}

const MAX_RECONNECTS = 5;
type Progress = (p: { progress: number; total?: number; message?: string }) => void;

export class UpstreamConnection {
  readonly config: Upstream;
  readonly #owner: UpstreamOwner;
  #state: UpstreamState = "idle";
  #client: Client | undefined;
  #transport: Transport | undefined;
  #connecting: Promise<Client> | undefined;
  #capabilities: ServerCapabilities | undefined;
  #instructions: string | undefined;
  #failures = 0;
  #retryAfter = 0;
  #lastError: string | undefined;
  #inFlight = 0;
  #refreshing: Promise<void> = Promise.resolve();
  readonly #life: UpstreamLifecycle;
  readonly #listing: ToolListing;
  /** Armed by a `NeedsLogin` failure: the next attempt comes as soon as the stored login changes. */
  readonly #login: LoginWatch;

  constructor(config: Upstream, owner: UpstreamOwner) {
    this.config = config;
    this.#owner = owner;
    this.#listing = new ToolListing(config, {
      clock: owner.clock,
      cache: owner.schemaCache,
      changed: () => owner.onToolsChanged(config.name),
      expired: () => void (this.#state === "connected" ? this.refreshTools() : this.start()),
    });
    this.#login = new LoginWatch(owner.clock, () => owner.credentialsStamp?.(config), () => {
      log.info(`mcp_servers.${this.name}: its stored login changed; connecting`);
      void this.start();
    });
    this.#life = new UpstreamLifecycle(config, owner.clock, {
      busy: () => this.#inFlight > 0,
      recycle: (why) => void this.#recycle(why),
      ping: () => this.#keepalive(),
    });
  }

  get name(): string {
    return this.config.name;
  }
  get state(): UpstreamState {
    return this.#state;
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
  get lastError(): string | undefined {
    return this.#lastError;
  }
  get pid(): number | undefined {
    return (this.#transport as GroupStdioTransport | undefined)?.pid;
  }
  /** True while the tool list comes from the schema cache, not a live listing. */
  get fromCache(): boolean {
    return this.#listing.fromCache;
  }

  status() {
    return {
      name: this.name,
      state: this.#state,
      transport: this.config.kind,
      tools: this.#listing.tools.length,
      pid: this.pid,
      cached: this.#listing.fromCache || undefined,
      failures: this.#failures,
      retryInSeconds: this.#state === "cooldown"
        ? Math.max(0, Math.ceil((this.#retryAfter - this.#owner.clock.now()) / 1000))
        : undefined,
      lastError: this.#lastError,
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

  /** The live client, connecting first if needed. Concurrent callers share one attempt. */
  ensureConnected(): Promise<Client> {
    if (this.#state === "connected" && this.#client) return Promise.resolve(this.#client);
    if (this.#connecting) return this.#connecting;
    if (this.#state === "stopped") {
      return Promise.reject(
        new Error(
          `mcp_servers.${this.name} is stopped${this.#lastError ? ` (${this.#lastError})` : ""}`,
        ),
      );
    }
    if (this.#state === "cooldown" && this.#owner.clock.now() < this.#retryAfter && !this.#login.changed()) {
      if (this.#login.waiting) return Promise.reject(new Error(this.#lastError));
      const secs = Math.ceil((this.#retryAfter - this.#owner.clock.now()) / 1000);
      return Promise.reject(
        new Error(
          `mcp_servers.${this.name} is unavailable (${this.#lastError}); next attempt in ${secs} s`,
        ),
      );
    }
    const attempt = this.#connect().finally(() => {
      if (this.#connecting === attempt) this.#connecting = undefined;
    });
    this.#connecting = attempt;
    return attempt;
  }

  async #connect(): Promise<Client> {
    const before = this.#listing.tools;
    const announce = this.#state === "recycled" || before.length > 0 || this.#failures > 0;
    if (this.#state !== "reconnecting") this.#state = "connecting";
    let transport: Transport | undefined;
    let explain: BuiltTransport["explain"];
    try {
      const built = this.#owner.openTransport(this.config);
      explain = built.explain;
      if (built.unresolved.length) {
        log.warn(
          `mcp_servers.${this.name}: \${${built.unresolved.join("}, ${")}} not set; passed on literally`,
        );
      }
      transport = built.transport;
      if (this.config.kind === "stdio") {
        (transport as GroupStdioTransport).onStderrLine = (l) => this.#owner.onStderrLine(this.name, l);
      }
      const client = newClient(this.config, {
        onToolsChanged: () => void this.refreshTools(),
        onPromptsChanged: () => this.#owner.onPromptsChanged(this.name),
        onResourcesChanged: () => this.#owner.onResourcesChanged(this.name),
        request: (method, params, signal) =>
          this.#owner.handleServerRequest(this.name, method, params, signal),
        notification: (method, params) => this.#owner.onNotification(this.name, method, params),
      });
      await client.connect(transport, { timeout: this.config.connectTimeoutSeconds * 1000 });
      this.#capabilities = client.getServerCapabilities();
      this.#instructions = client.getInstructions();
      await this.#listing.list(client, {
        capabilities: this.#capabilities,
        instructions: this.#instructions,
      });
      this.#client = client;
      this.#transport = transport;
      this.#state = "connected";
      this.#failures = 0;
      this.#lastError = undefined;
      this.#login.stop();
      client.onclose = () => this.#onClosed(client);
      this.#life.connected();
      log.debug(
        `mcp_servers.${this.name}: connected (${built.describe}), ${this.#listing.tools.length} tools`,
      );
      if (announce) this.#listing.announceSince(before);
      return client;
    } catch (err) {
      if (err instanceof UpstreamRefused) {
        this.#state = "stopped"; // the config itself is refused: never retried
        this.#lastError = err.message;
        log.error(err.message);
        throw new Error(err.message);
      }
      const tail = (transport as GroupStdioTransport | undefined)?.stderrTail?.slice(-3) ?? [];
      await transport?.close().catch(() => {});
      if (err instanceof NeedsLogin) {
        this.#failed(err.message, true);
        throw new Error(err.message);
      }
      this.#failed(explain?.(describeFailure(err, tail), tail) ?? describeFailure(err, tail));
      throw new Error(`mcp_servers.${this.name} failed to start: ${this.#lastError}`);
    }
  }

  #failed(message: string, loginNeeded = false): void {
    this.#failures++;
    this.#lastError = message;
    this.#retryAfter = this.#owner.clock.now() + cooldownSeconds(this.#failures) * 1000;
    this.#state = "cooldown";
    this.#client = undefined;
    this.#transport = undefined;
    this.#login.stop();
    if (loginNeeded) {
      log.warn(message);
      this.#login.arm();
      return;
    }
    log.warn(
      `mcp_servers.${this.name}: ${message} (attempt ${this.#failures}; next in ${
        cooldownSeconds(this.#failures)
      } s)`,
    );
  }

  /** Re-list tools (after list_changed or a TTL); tells the owner when the set changed. */
  refreshTools(): Promise<void> {
    this.#refreshing = this.#refreshing.then(async () => {
      const client = this.#client;
      if (!client || this.#state !== "connected") return;
      const before = this.#listing.tools;
      try {
        await this.#listing.list(client, {
          capabilities: this.#capabilities,
          instructions: this.#instructions,
        });
      } catch (err) {
        log.warn(`mcp_servers.${this.name}: refreshing tools failed: ${messageOf(err)}`);
        return;
      }
      this.#listing.announceSince(before);
    });
    return this.#refreshing;
  }

  /** The connection dropped: reconnect with jittered backoff unless we closed it on purpose. */
  #onClosed(client: Client): void {
    if (this.#client !== client || this.#state !== "connected") return;
    this.#client = undefined;
    this.#transport = undefined;
    this.#life.disconnected();
    this.#state = "reconnecting";
    log.warn(`mcp_servers.${this.name}: connection lost; reconnecting`);
    void this.#reconnectLoop();
  }

  async #reconnectLoop(): Promise<void> {
    for (let attempt = 1; attempt <= MAX_RECONNECTS && this.#state === "reconnecting"; attempt++) {
      await new Promise((r) => this.#owner.clock.setTimeout(() => r(undefined), jitteredBackoff(attempt)));
      if (this.#state !== "reconnecting") return;
      try {
        await this.ensureConnected();
        return;
      } catch {
        if ((this.#state as UpstreamState) === "cooldown" && attempt < MAX_RECONNECTS) {
          this.#state = "reconnecting";
        }
      }
    }
  }

  async #recycle(why: string): Promise<void> {
    if (this.#state !== "connected" || this.#inFlight > 0) return;
    const transport = this.#transport;
    this.#state = "recycled";
    this.#client = undefined;
    this.#transport = undefined;
    this.#life.disconnected();
    log.info(`mcp_servers.${this.name}: recycled (${why}); it restarts on the next call`);
    await transport?.close().catch(() => {});
  }

  async #keepalive(): Promise<void> {
    const client = this.#client;
    if (!client || this.#inFlight > 0) return;
    try {
      await client.ping({ timeout: 30_000 });
    } catch (err) {
      if ((err as { code?: number }).code === -32601 && this.#capabilities?.tools) {
        await client.listTools(undefined, { timeout: 30_000 }).catch(() =>
          this.#dropped(client, "keepalive failed")
        );
        return;
      }
      this.#dropped(client, `keepalive failed: ${messageOf(err)}`);
    }
  }

  #dropped(client: Client, why: string): void {
    log.warn(`mcp_servers.${this.name}: ${why}`);
    void client.close().catch(() => {});
  }

  /** Run `fn` with a live client, counting it as in flight (recycling waits for it). */
  async withClient<T>(fn: (client: Client) => Promise<T>): Promise<T> {
    const client = await this.ensureConnected();
    this.#inFlight++;
    try {
      return await fn(client);
    } finally {
      this.#inFlight--;
      this.#life.activity();
    }
  }

  /** Call a tool by its raw name. Reads are retried once after a lost connection; writes are not. */
  async callTool(
    raw: string,
    args: Record<string, unknown>,
    opts: { signal?: AbortSignal; onprogress?: Progress; readOnly: boolean },
  ): Promise<CallToolResult> {
    let used: Client | undefined;
    const call = (client: Client) => {
      used = client;
      return client.callTool({ name: raw, arguments: args }, undefined, {
        signal: opts.signal,
        timeout: this.config.callTimeoutSeconds * 1000,
        resetTimeoutOnProgress: true,
        onprogress: opts.onprogress,
      }) as Promise<CallToolResult>;
    };
    try {
      return await this.withClient(call);
    } catch (err) {
      if (!isConnectionLoss(err) || opts.signal?.aborted) throw err;
      // do not wait for the transport to notice: the next attempt must not reuse this client
      if (used) this.#onClosed(used);
      if (!opts.readOnly) throw new OutcomeUncertain(this.name, raw);
      log.info(`mcp_servers.${this.name}: connection lost during read-only ${raw}; retrying once`);
      return await this.withClient(call);
    }
  }

  async stop(): Promise<void> {
    this.#state = "stopped";
    this.#login.stop();
    this.#life.disconnected();
    this.#listing.stop();
    const transport = this.#transport;
    const client = this.#client;
    this.#client = undefined;
    this.#transport = undefined;
    await client?.close().catch(() => {});
    await transport?.close().catch(() => {});
  }
}
