/**
 * One host session's MCP server in front of the gateway: tools (exactly the catalog), resources
 * (with subscriptions), prompts, completion and logging when upstreams back them; progress
 * notifications and cancellation passed through to the running tool; `list_changed` forwarded
 * when the gateway's lists change. The session is also the gateway's `SessionPeer`: approvals,
 * elicitation, sampling and log messages for its calls come back through it, on the stream of the
 * request that caused them.
 */
import { randomUUID } from "node:crypto";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ClientRequestSchema,
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  type JSONRPCRequest,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { type Gateway, UnknownTool } from "./gateway.ts";
import type { SessionPeer } from "./gateway_requests.ts";
import { type CallHandler, fastCalls } from "./host_fast_calls.ts";
import { callToolParamsValid, isRequestShape } from "./jsonrpc_shape.ts";
import { serverInfo } from "./server_info.ts";

export interface SessionServer {
  server: Server;
  peer: SessionPeer;
  /**
   * Connect the server to a host transport, answering a request whose params do not fit its
   * method with -32602 and one readable line (the SDK would answer -32603 with a dump of schema
   * issues).
   */
  connect(transport: Transport): Promise<void>;
  /** Stop forwarding gateway changes to this session and detach it from the gateway. */
  detach(): void;
}

/** Every request a client may send, by method. */
const REQUEST_SCHEMAS = new Map(ClientRequestSchema.options.map((s) => [s.shape.method.value as string, s]));

/** Why a request's params do not fit its method, in one line; undefined when they do (or it is unknown). */
export function paramsProblem(request: JSONRPCRequest): string | undefined {
  // the hot request, checked by hand (zod took more of a call's time than the call's gates)
  if (request.method === "tools/call" && callToolParamsValid(request.params)) return undefined;
  const schema = REQUEST_SCHEMAS.get(request.method);
  const r = schema?.safeParse({ method: request.method, params: request.params });
  if (!r || r.success) return undefined;
  const issues = r.error.issues;
  const shown = issues.slice(0, 3).map((i) => {
    const where = i.path.map(String).join(".") || "params";
    const what = i.message.replace(/^Invalid input: /, "").replace(
      /^Invalid input$/,
      "not an accepted value",
    );
    return `${where}: ${what}`;
  });
  const more = issues.length > 3 ? ` (and ${issues.length - 3} more)` : "";
  return `Invalid params for ${request.method}: ${shown.join("; ")}${more}`;
}

export function createSessionServer(gateway: Gateway, id: string = randomUUID()): SessionServer {
  const m = gateway.manifest;
  const capabilities = gateway.capabilities();
  const server = new Server(serverInfo(m), { capabilities });

  const peer: SessionPeer = {
    id,
    clientCapabilities: () => server.getClientCapabilities(),
    elicit: (params, opts) =>
      server.elicitInput(params as Parameters<Server["elicitInput"]>[0], {
        timeout: opts.timeoutMs,
        signal: opts.signal,
        relatedRequestId: opts.relatedRequestId,
      }),
    createMessage: (params, opts) =>
      server.createMessage(params, {
        timeout: opts.timeoutMs,
        signal: opts.signal,
        relatedRequestId: opts.relatedRequestId,
      }),
    notify: (method, params, relatedRequestId) =>
      server.notification({ method, params } as Parameters<Server["notification"]>[0], { relatedRequestId }),
  };
  const detachPeer = gateway.attach(peer);

  /** `tools/call`, for the SDK's dispatch and the fast path alike (`host_fast_calls.ts`). */
  const callTool: CallHandler = async (req, extra) => {
    const token = (req.params._meta as { progressToken?: string | number } | undefined)?.progressToken;
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
        requestId: extra.requestId,
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
  };
  if (capabilities.tools) {
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: gateway.listTools() }));
    server.setRequestHandler(
      CallToolRequestSchema,
      (req, extra) =>
        callTool(req, {
          ...extra,
          sendNotification: (n) => extra.sendNotification(n as Parameters<typeof extra.sendNotification>[0]),
        }) as Promise<CallToolResult>,
    );
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
    if (capabilities.resources.subscribe) {
      server.setRequestHandler(
        SubscribeRequestSchema,
        async (req) => (await gateway.content.subscribe(req.params.uri, peer), {}),
      );
      server.setRequestHandler(
        UnsubscribeRequestSchema,
        async (req) => (await gateway.content.unsubscribe(req.params.uri, peer), {}),
      );
    }
  }
  if (capabilities.prompts) {
    server.setRequestHandler(ListPromptsRequestSchema, () => gateway.content.listPrompts());
    server.setRequestHandler(
      GetPromptRequestSchema,
      (req) => gateway.content.getPrompt(req.params.name, req.params.arguments),
    );
  }
  if (capabilities.completions) {
    server.setRequestHandler(CompleteRequestSchema, (req) => gateway.content.complete(req.params));
  }
  if (capabilities.logging) {
    server.setRequestHandler(
      SetLevelRequestSchema,
      async (req) => (await gateway.setLogLevel(peer, req.params.level), {}),
    );
  }

  let initialized = false;
  server.oninitialized = () => {
    initialized = true;
  };
  const unsubscribe = gateway.onChange((kind) => {
    if (!initialized || !capabilities[kind]) return;
    const send = kind === "tools"
      ? server.sendToolListChanged()
      : kind === "prompts"
      ? server.sendPromptListChanged()
      : server.sendResourceListChanged();
    void send.catch(() => {});
  });
  return {
    server,
    peer,
    connect: async (transport) => {
      await server.connect(transport);
      const handle = transport.onmessage!;
      const fast = capabilities.tools ? fastCalls(transport, callTool) : undefined;
      const closed = transport.onclose;
      transport.onclose = () => {
        fast?.closed();
        closed?.();
      };
      transport.onmessage = (message, extra) => {
        if (fast?.take(message)) return;
        fast?.cancelled(message);
        const problem = isRequestShape(message) ? paramsProblem(message as JSONRPCRequest) : undefined;
        if (problem === undefined) return handle(message, extra);
        const id = (message as JSONRPCRequest).id;
        void transport.send({
          jsonrpc: "2.0",
          id,
          error: { code: ErrorCode.InvalidParams, message: problem },
        })
          .catch(() => {});
      };
    },
    detach: () => {
      unsubscribe();
      detachPeer();
    },
  };
}
