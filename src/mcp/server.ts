/**
 * One host session's MCP server in front of the gateway: tools (exactly the catalog), resources
 * and prompts when upstreams back them, progress notifications and cancellation passed through to
 * the running tool, and `list_changed` forwarded when the gateway's lists change. The session is
 * also the gateway's `SessionPeer`: approvals, elicitation and sampling for calls it made come
 * back through it.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { randomUUID } from "node:crypto";
import { VERSION } from "../version.ts";
import { type Gateway, UnknownTool } from "./gateway.ts";
import type { SessionPeer } from "./gateway_requests.ts";

export interface SessionServer {
  server: Server;
  peer: SessionPeer;
  /** Stop forwarding gateway changes to this session. */
  detach(): void;
}

export function createSessionServer(gateway: Gateway, id: string = randomUUID()): SessionServer {
  const m = gateway.manifest;
  const capabilities = gateway.capabilities();
  const server = new Server({ name: m.name, version: m.version ?? VERSION }, { capabilities });

  const peer: SessionPeer = {
    id,
    clientCapabilities: () => server.getClientCapabilities(),
    elicit: (params, opts) =>
      server.elicitInput(params as Parameters<Server["elicitInput"]>[0], {
        timeout: opts.timeoutMs,
        signal: opts.signal,
      }),
    createMessage: (params, opts) =>
      server.createMessage(params, { timeout: opts.timeoutMs, signal: opts.signal }),
  };

  if (capabilities.tools) {
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: gateway.listTools() }));
    server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
      const token = req.params._meta?.progressToken;
      const onprogress = token === undefined
        ? undefined
        : (p: { progress: number; total?: number; message?: string }) => {
          void extra.sendNotification({
            method: "notifications/progress",
            params: { ...p, progressToken: token },
          }).catch(() => {});
        };
      try {
        return await gateway.callTool(req.params.name, req.params.arguments ?? {}, {
          session: peer,
          signal: extra.signal,
          onprogress,
        });
      } catch (err) {
        // a plain error with a code: the SDK sends its message as is (McpError would prefix it)
        if (err instanceof UnknownTool) {
          throw Object.assign(new Error(err.message), { code: ErrorCode.InvalidParams });
        }
        throw err;
      }
    });
  }
  if (capabilities.resources) {
    server.setRequestHandler(ListResourcesRequestSchema, () => gateway.content.listResources());
    server.setRequestHandler(
      ListResourceTemplatesRequestSchema,
      () => gateway.content.listResourceTemplates(),
    );
    server.setRequestHandler(
      ReadResourceRequestSchema,
      (req) => gateway.content.readResource(req.params.uri),
    );
  }
  if (capabilities.prompts) {
    server.setRequestHandler(ListPromptsRequestSchema, () => gateway.content.listPrompts());
    server.setRequestHandler(
      GetPromptRequestSchema,
      (req) => gateway.content.getPrompt(req.params.name, req.params.arguments),
    );
  }

  let initialized = false;
  server.oninitialized = () => {
    initialized = true;
  };
  const detach = gateway.onChange((kind) => {
    if (!initialized || !capabilities[kind]) return;
    const send = kind === "tools"
      ? server.sendToolListChanged()
      : kind === "prompts"
      ? server.sendPromptListChanged()
      : server.sendResourceListChanged();
    void send.catch(() => {});
  });
  return { server, peer, detach };
}
