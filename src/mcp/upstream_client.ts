/**
 * The SDK client hermit uses towards one upstream: the capabilities it declares (sampling and
 * elicitation only when the manifest allows them, never `sampling.tools`), the handlers that
 * forward server-to-client requests and `list_changed` notifications to the owner, one
 * connection and whether it was lost (from its transport, never from an error's wording), and how
 * failures are worded.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  type ClientCapabilities,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  LoggingMessageNotificationSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { mcpMessageOf, messageOf } from "../errors.ts";
import { log } from "../log.ts";
import type { Upstream } from "../manifest/types.ts";
import type { GroupStdioTransport } from "./stdio_transport.ts";
import { NeedsLogin } from "./oauth/errors.ts";
import { type BuiltTransport, UpstreamRefused } from "./upstream_transport.ts";
import type { FailureKind } from "./upstream_state.ts";
import type { UpstreamOwner } from "./upstream_types.ts";
import { type FastCallOptions, UpstreamFastCalls } from "./upstream_fast_calls.ts";
import { VERSION } from "../version.ts";

export interface ClientHooks {
  onToolsChanged(): void;
  onPromptsChanged(): void;
  onResourcesChanged(): void;
  request(method: string, params: unknown, signal: AbortSignal): Promise<unknown>;
  /** Log messages and resource updates, passed on to hosts. */
  notification(method: string, params: Record<string, unknown>): void;
}

/**
 * The hooks of `u`'s clients: each to the owner with the server's name, but a changed tool list to
 * `toolsChanged` (the connection lists the tools again before the owner hears of it).
 */
export function hooksToOwner(u: Upstream, owner: UpstreamOwner, toolsChanged: () => void): ClientHooks {
  return {
    onToolsChanged: toolsChanged,
    onPromptsChanged: () => owner.onPromptsChanged(u.name),
    onResourcesChanged: () => owner.onResourcesChanged(u.name),
    request: (method, params, signal) => owner.handleServerRequest(u.name, method, params, signal),
    notification: (method, params) => owner.onNotification(u.name, method, params),
  };
}

export function newClient(u: Upstream, hooks: ClientHooks): Client {
  const capabilities: ClientCapabilities = {};
  if (u.sampling.enabled) capabilities.sampling = {};
  if (u.elicitation.enabled) capabilities.elicitation = {};
  const client = new Client({ name: "hermit", version: VERSION }, { capabilities });
  const forward = (method: string) => (req: { params: unknown }, extra: { signal: AbortSignal }) =>
    hooks.request(method, req.params, extra.signal) as Promise<never>;
  if (capabilities.sampling) {
    client.setRequestHandler(CreateMessageRequestSchema, forward("sampling/createMessage"));
  }
  if (capabilities.elicitation) client.setRequestHandler(ElicitRequestSchema, forward("elicitation/create"));
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => hooks.onToolsChanged());
  client.setNotificationHandler(PromptListChangedNotificationSchema, () => hooks.onPromptsChanged());
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => hooks.onResourcesChanged());
  client.setNotificationHandler(
    LoggingMessageNotificationSchema,
    (n) => hooks.notification(n.method, n.params),
  );
  client.setNotificationHandler(
    ResourceUpdatedNotificationSchema,
    (n) => hooks.notification(n.method, n.params),
  );
  return client;
}

/**
 * One connection to an upstream: its client and transport, and what the transport itself said
 * about it. The connection is lost when its transport closed (the process exited, the stream
 * ended) or could not deliver a message; an error the server answered, whatever its code or
 * wording, is not a loss. Also the protocol version the server answered `initialize` with.
 */
export class Link {
  readonly client: Client;
  readonly transport: Transport;
  #closed = false;
  #undeliverable = false;
  #serverVersion: string | undefined;
  #closing: Promise<void> | undefined;
  #fast: UpstreamFastCalls | undefined;

  /** Call before `client.connect(transport)`: the SDK chains the handlers set here. */
  constructor(client: Client, transport: Transport, onClosed: (link: Link) => void) {
    this.client = client;
    this.transport = transport;
    transport.onclose = () => {
      this.#closed = true;
      queueMicrotask(() => onClosed(this)); // after the SDK has failed what was pending on it
    };
    transport.onmessage = (m) => {
      const v = (m as { result?: { protocolVersion?: unknown } }).result?.protocolVersion;
      if (this.#serverVersion === undefined && typeof v === "string") this.#serverVersion = v;
    };
    const send = transport.send.bind(transport);
    transport.send = async (message, options) => {
      try {
        await send(message, options);
      } catch (err) {
        this.#undeliverable = true;
        throw err;
      }
    };
  }

  /**
   * Call after `client.connect(transport)`. The SDK handles a notification a microtask after it
   * arrives but a response at once, and forgets a call's progress handler with its response: a
   * progress notification read together with its call's result (one pipe read, one stream chunk)
   * was dropped. Responses now wait a microtask, behind what arrived before them. Also where tool
   * calls start taking the fast path (`callTool`).
   */
  responsesAfterNotifications(): void {
    const handle = this.transport.onmessage;
    if (!handle) return;
    const fast = this.#fast = new UpstreamFastCalls(this.client, this.transport);
    this.transport.onmessage = (m, extra) => {
      if (fast.take(m)) return;
      if ("method" in m) handle(m, extra);
      else queueMicrotask(() => handle(m, extra));
    };
  }

  /**
   * `tools/call` on this connection: past the SDK's Protocol where the tool allows
   * (`upstream_fast_calls.ts`), else through `Client.callTool`; the same result and errors.
   */
  callTool(
    params: { name: string; arguments?: Record<string, unknown> },
    opts: FastCallOptions,
  ): Promise<unknown> {
    if (this.#fast?.usable(params.name)) return this.#fast.call(params, opts);
    return this.client.callTool(params, undefined, opts);
  }

  /** The transport closed or could not deliver: this connection is gone. */
  get lost(): boolean {
    return this.#closed || this.#undeliverable;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** The version in the server's `initialize` result, if it answered one. */
  get serverVersion(): string | undefined {
    return this.#serverVersion;
  }

  /** Close the client and its transport (stops a stdio server's process group); never throws. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.client.close().catch(() => {});
      await this.transport.close().catch(() => {});
    })();
    return this.#closing;
  }
}

/**
 * A new connection to `config` through its owner (interpolated, screened, spawned or dialed): the
 * client and the link watching its transport, not connected yet. Stdio servers' stderr lines and
 * unreadable output go to the owner's log.
 */
export async function openLink(
  config: Upstream,
  owner: Pick<UpstreamOwner, "openTransport" | "onStderrLine">,
  hooks: ClientHooks,
  onLost: (link: Link) => void,
): Promise<{ link: Link; describe: string; explain: BuiltTransport["explain"] }> {
  const built = await owner.openTransport(config);
  if (built.unresolved.length) {
    log.warn(
      `mcp_servers.${config.name}: \${${built.unresolved.join("}, ${")}} not set; passed on literally`,
    );
  }
  if (config.kind === "stdio") {
    const stdio = built.transport as GroupStdioTransport;
    stdio.onStderrLine = (l) => owner.onStderrLine(config.name, l);
    stdio.onProblem = (t) => log.warn(`mcp_servers.${config.name}: ${t}`);
  }
  return {
    link: new Link(newClient(config, hooks), built.transport, onLost),
    describe: built.describe,
    explain: built.explain,
  };
}

/** What kind of failure a connect attempt met, and its one line. */
export function classifyFailure(
  err: unknown,
  ctx: { link?: Link; stderrTail: string[]; oauth: boolean },
): { kind: FailureKind; why: string } {
  if (err instanceof UpstreamRefused) return { kind: "refused", why: err.message };
  if (err instanceof NeedsLogin) return { kind: "needs-login", why: err.message };
  return { kind: "error", why: describeFailure(err, ctx) };
}

/**
 * Keep an idle connection honest: `ping`, or `tools/list` for a server without ping. Undefined
 * when it answered, else why it is to be dropped.
 */
export async function probe(client: Client, hasTools: boolean): Promise<string | undefined> {
  try {
    await client.ping({ timeout: 30_000 });
    return undefined;
  } catch (err) {
    if ((err as { code?: number }).code !== ErrorCode.MethodNotFound || !hasTools) {
      return `keepalive failed: ${messageOf(err)}`;
    }
  }
  return await client.listTools(undefined, { timeout: 30_000 }).then(
    () => undefined,
    () => "keepalive failed",
  );
}

/** One line for people: why a connection attempt failed. Decided from types and codes, not wording. */
export function describeFailure(
  err: unknown,
  ctx: { link?: Link; stderrTail: string[]; oauth: boolean },
): string {
  let msg = mcpMessageOf(err);
  const version = ctx.link?.serverVersion;
  const code = (err as { code?: unknown } | undefined)?.code;
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
    msg = `it speaks MCP protocol version ${version}; hermit speaks ${
      SUPPORTED_PROTOCOL_VERSIONS.join(", ")
    }`;
  } else if (code === 401) {
    // an HTTP status from the transport (StreamableHTTPError, SseError): JSON-RPC codes are negative
    // with an OAuth provider the SDK has authorized first: the server refused the new token
    msg = ctx.oauth
      ? "the server refused hermit's new OAuth access token (HTTP 401 right after authorizing)"
      : "the server requires authorization (HTTP 401): add 'auth: oauth' to it and run 'hermit login', " +
        "or send a token in headers:";
  } else if (ctx.link?.closed && ctx.stderrTail.length) {
    msg = `the server exited: ${ctx.stderrTail.join(" | ")}`;
  } else if (code === ErrorCode.RequestTimeout) msg = `no answer to initialize (${msg})`;
  return msg.slice(0, 500);
}
