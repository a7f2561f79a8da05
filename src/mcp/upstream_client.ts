/**
 * The SDK client hermit uses towards one upstream: the capabilities it declares (sampling and
 * elicitation only when the manifest allows them, never `sampling.tools`), the handlers that
 * forward server-to-client requests and `list_changed` notifications to the owner, and how
 * failures are worded.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  type ClientCapabilities,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { mcpMessageOf, messageOf } from "../errors.ts";
import type { Upstream } from "../manifest/types.ts";
import { VERSION } from "../version.ts";

export interface ClientHooks {
  onToolsChanged(): void;
  onPromptsChanged(): void;
  onResourcesChanged(): void;
  request(method: string, params: unknown, signal: AbortSignal): Promise<unknown>;
  /** Log messages and resource updates, passed on to hosts. */
  notification(method: string, params: Record<string, unknown>): void;
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

export class OutcomeUncertain extends Error {
  constructor(server: string, tool: string) {
    super(
      `outcome uncertain: mcp_servers.${server} went away while running ${tool}; it may or may not have taken effect. ` +
        "Check before retrying.",
    );
  }
}

export function isConnectionLoss(err: unknown): boolean {
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

/** One line for people: why a connection attempt failed. */
export function describeFailure(err: unknown, stderrTail: string[]): string {
  let msg = mcpMessageOf(err);
  const version = /protocol version is not supported: (\S+)/i.exec(msg);
  if (version) {
    msg = `it speaks MCP protocol version ${version[1]}; hermit speaks ${
      SUPPORTED_PROTOCOL_VERSIONS.join(", ")
    }`;
  } else if ((err as { code?: unknown } | undefined)?.code === 401) {
    msg = /after successful authentication/i.test(msg)
      ? "the server refused hermit's new OAuth access token (HTTP 401 right after authorizing)"
      : "the server requires authorization (HTTP 401): add 'auth: oauth' to it and run 'hermit login', " +
        "or send a token in headers:";
  } else if (/connection closed/i.test(msg) && stderrTail.length) {
    msg = `the server exited: ${stderrTail.join(" | ")}`;
  } else if (/timed out|timeout/i.test(msg)) msg = `no answer to initialize (${msg})`;
  return msg.slice(0, 500);
}
