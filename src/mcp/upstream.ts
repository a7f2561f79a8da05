/**
 * One upstream MCP server and its life: connect (with a duplicate-spawn guard and a connect
 * cooldown of min(30·2^(n-1), 600) s after failures, so a dead server is never respawned in a
 * storm), discover its tools (paginated, capped at 50 pages, filtered and renamed), follow
 * `list_changed`, keep HTTP connections alive with `ping`, recycle idle or old stdio servers,
 * and reconnect with jittered backoff when a live connection drops. Calls wait for a connection
 * and are at-most-once for tools that are not read-only.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  type CallToolResult,
  type ClientCapabilities,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  type ServerCapabilities,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { messageOf } from "../errors.ts";
import { log } from "../log.ts";
import type { Upstream } from "../manifest/types.ts";
import { VERSION } from "../version.ts";
import { cooldownSeconds, jitteredBackoff, UpstreamLifecycle } from "./upstream_lifecycle.ts";
import { listAllTools, mapTools, type UpstreamTool } from "./upstream_tools.ts";
import { buildTransport, type TransportContext, UpstreamRefused } from "./upstream_transport.ts";
import type { GroupStdioTransport } from "./stdio_transport.ts";

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
  transportContext(u: Upstream): TransportContext;
  onToolsChanged(server: string): void;
  onPromptsChanged(server: string): void;
  onResourcesChanged(server: string): void;
  onStderrLine(server: string, line: string): void;
  /** Server-to-client requests (sampling, elicitation), answered by the gateway. */
  handleServerRequest(server: string, method: string, params: unknown, signal: AbortSignal): Promise<unknown>;
}

export class UpstreamUnavailable extends Error {}

const MAX_RECONNECTS = 5;

export class UpstreamConnection {
  readonly config: Upstream;
  readonly #owner: UpstreamOwner;
  #state: UpstreamState = "idle";
  #client: Client | undefined;
  #transport: Transport | undefined;
  #connecting: Promise<Client> | undefined;
  #tools: UpstreamTool[] = [];
  #capabilities: ServerCapabilities | undefined;
  #instructions: string | undefined;
  #failures = 0;
  #retryAfter = 0;
  #lastError: string | undefined;
  #inFlight = 0;
  #refreshing: Promise<void> = Promise.resolve();
  readonly #life: UpstreamLifecycle;

  constructor(config: Upstream, owner: UpstreamOwner) {
    this.config = config;
    this.#owner = owner;
    this.#life = new UpstreamLifecycle(config, {
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
    return this.#tools;
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

  status() {
    return {
      name: this.name,
      state: this.#state,
      transport: this.config.kind,
      tools: this.#tools.length,
      pid: this.pid,
      failures: this.#failures,
      retryInSeconds: this.#state === "cooldown"
        ? Math.max(0, Math.ceil((this.#retryAfter - Date.now()) / 1000))
        : undefined,
      lastError: this.#lastError,
    };
  }

  /** Connect now (eager start); failures are recorded, not thrown. */
  async start(): Promise<void> {
    try {
      await this.ensureConnected();
    } catch {
      // recorded in lastError; the cooldown governs the next attempt
    }
  }

  /** The live client, connecting first if needed. Concurrent callers share one attempt. */
  ensureConnected(): Promise<Client> {
    if (this.#state === "connected" && this.#client) return Promise.resolve(this.#client);
    if (this.#connecting) return this.#connecting;
    if (this.#state === "stopped") {
      return Promise.reject(new UpstreamUnavailable(`mcp_servers.${this.name} is stopped`));
    }
    if (this.#state === "cooldown" && Date.now() < this.#retryAfter) {
      const secs = Math.ceil((this.#retryAfter - Date.now()) / 1000);
      return Promise.reject(
        new UpstreamUnavailable(
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
    const wasRecycled = this.#state === "recycled";
    this.#state = this.#state === "reconnecting" ? "reconnecting" : "connecting";
    let transport: Transport | undefined;
    try {
      const built = buildTransport(this.config, this.#owner.transportContext(this.config));
      if (built.unresolved.length) {
        log.warn(
          `mcp_servers.${this.name}: \${${built.unresolved.join("}, ${")}} not set; passed on literally`,
        );
      }
      transport = built.transport;
      const stdio = transport as GroupStdioTransport;
      if ("onStderrLine" in stdio || this.config.kind === "stdio") {
        stdio.onStderrLine = (line) => this.#owner.onStderrLine(this.name, line);
      }
      const client = this.#newClient();
      await client.connect(transport, { timeout: this.config.connectTimeoutSeconds * 1000 });
      this.#capabilities = client.getServerCapabilities();
      this.#instructions = client.getInstructions();
      const before = this.#tools;
      this.#tools = this.#capabilities?.tools
        ? mapTools(await listAllTools(client, this.name), this.config)
        : [];
      this.#client = client;
      this.#transport = transport;
      this.#state = "connected";
      this.#failures = 0;
      this.#lastError = undefined;
      client.onclose = () => this.#onClosed(client);
      this.#life.connected();
      log.debug(`mcp_servers.${this.name}: connected (${built.describe}), ${this.#tools.length} tools`);
      if (wasRecycled || before.length) this.#emitIfChanged(before);
      return client;
    } catch (err) {
      if (err instanceof UpstreamRefused) {
        // never retried: the config itself is refused
        this.#state = "stopped";
        this.#lastError = err.message;
        log.error(err.message);
        throw new UpstreamUnavailable(err.message);
      }
      const tail = (transport as GroupStdioTransport | undefined)?.stderrTail?.slice(-3) ?? [];
      await transport?.close().catch(() => {});
      this.#failed(describeFailure(err, tail));
      throw new UpstreamUnavailable(`mcp_servers.${this.name} failed to start: ${this.#lastError}`);
    }
  }

  #newClient(): Client {
    const capabilities: ClientCapabilities = {};
    if (this.config.sampling.enabled) capabilities.sampling = {};
    if (this.config.elicitation.enabled) capabilities.elicitation = {};
    const client = new Client({ name: "hermit", version: VERSION }, { capabilities });
    const forward = (method: string) => (req: { params: unknown }, extra: { signal: AbortSignal }) =>
      this.#owner.handleServerRequest(this.name, method, req.params, extra.signal) as Promise<never>;
    if (capabilities.sampling) {
      client.setRequestHandler(CreateMessageRequestSchema, forward("sampling/createMessage"));
    }
    if (capabilities.elicitation) {
      client.setRequestHandler(ElicitRequestSchema, forward("elicitation/create"));
    }
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void this.refreshTools());
    client.setNotificationHandler(
      PromptListChangedNotificationSchema,
      () => this.#owner.onPromptsChanged(this.name),
    );
    client.setNotificationHandler(
      ResourceListChangedNotificationSchema,
      () => this.#owner.onResourcesChanged(this.name),
    );
    return client;
  }

  #failed(message: string): void {
    this.#failures++;
    this.#lastError = message;
    this.#retryAfter = Date.now() + cooldownSeconds(this.#failures) * 1000;
    this.#state = "cooldown";
    this.#client = undefined;
    this.#transport = undefined;
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
      const before = this.#tools;
      try {
        this.#tools = mapTools(await listAllTools(client, this.name), this.config);
      } catch (err) {
        log.warn(`mcp_servers.${this.name}: refreshing tools failed: ${messageOf(err)}`);
        return;
      }
      this.#emitIfChanged(before);
    });
    return this.#refreshing;
  }

  #emitIfChanged(before: readonly UpstreamTool[]): void {
    const key = (ts: readonly UpstreamTool[]) => JSON.stringify(ts.map((t) => [t.exported, t.tool]));
    if (key(before) === key(this.#tools)) return;
    const was = new Set(before.map((t) => t.exported));
    const now = new Set(this.#tools.map((t) => t.exported));
    const added = [...now].filter((n) => !was.has(n));
    const removed = [...was].filter((n) => !now.has(n));
    log.info(
      `mcp_servers.${this.name}: tools changed${added.length ? "; added: " + added.join(", ") : ""}${
        removed.length ? "; removed: " + removed.join(", ") : ""
      }`,
    );
    this.#owner.onToolsChanged(this.name);
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
      await new Promise((r) => setTimeout(r, jitteredBackoff(attempt)));
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
    opts: {
      signal?: AbortSignal;
      onprogress?: (p: { progress: number; total?: number; message?: string }) => void;
      readOnly: boolean;
    },
  ): Promise<CallToolResult> {
    const call = (client: Client) =>
      client.callTool({ name: raw, arguments: args }, undefined, {
        signal: opts.signal,
        timeout: this.config.callTimeoutSeconds * 1000,
        resetTimeoutOnProgress: true,
        onprogress: opts.onprogress,
      }) as Promise<CallToolResult>;
    try {
      return await this.withClient(call);
    } catch (err) {
      if (!isConnectionLoss(err) || opts.signal?.aborted) throw err;
      if (!opts.readOnly) throw new OutcomeUncertain(this.name, raw);
      log.info(`mcp_servers.${this.name}: connection lost during read-only ${raw}; retrying once`);
      return await this.withClient(call);
    }
  }

  async stop(): Promise<void> {
    this.#state = "stopped";
    this.#life.disconnected();
    const transport = this.#transport;
    const client = this.#client;
    this.#client = undefined;
    this.#transport = undefined;
    await client?.close().catch(() => {});
    await transport?.close().catch(() => {});
  }
}

export class OutcomeUncertain extends Error {
  constructor(server: string, tool: string) {
    super(
      `outcome uncertain: mcp_servers.${server} went away while running ${tool}; it may or may not have taken effect. ` +
        "Check before retrying.",
    );
  }
}

function isConnectionLoss(err: unknown): boolean {
  const m = messageOf(err).toLowerCase();
  return (err as { code?: number }).code === -32000 ||
    [
      "connection closed",
      "transport is closed",
      "not connected",
      "broken pipe",
      "session not found",
      "socket",
    ]
      .some((s) => m.includes(s));
}

function describeFailure(err: unknown, stderrTail: string[]): string {
  let msg = messageOf(err).replace(/^MCP error -?\d+: /, "");
  if (/connection closed/i.test(msg) && stderrTail.length) {
    msg = `the server exited: ${stderrTail.join(" | ")}`;
  }
  if (/timed out|timeout/i.test(msg)) msg = `no answer to initialize (${msg})`;
  return msg.slice(0, 500);
}
