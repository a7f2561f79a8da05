/**
 * For unit tests of one upstream connection: an owner (what the gateway gives an upstream) with a
 * fake clock and transports made by the test, and in-process MCP servers (the real SDK server on
 * linked in-memory transports) whose handlers the test writes.
 */
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { Upstream } from "../../src/manifest/types.ts";
import type { UpstreamOwner } from "../../src/mcp/upstream.ts";
import type { Clock } from "../../src/platform/clock.ts";

export function testOwner(clock: Clock, open: (u: Upstream) => Transport, more: Partial<UpstreamOwner> = {}) {
  const owner: UpstreamOwner = {
    clock,
    openTransport: (u) => ({ transport: open(u), describe: "in process", unresolved: [] }),
    onToolsChanged: () => {},
    onPromptsChanged: () => {},
    onResourcesChanged: () => {},
    onStderrLine: () => {},
    handleServerRequest: () => Promise.resolve({}),
    onNotification: () => {},
    ...more,
  };
  return owner;
}

export interface InProcessServer {
  /** The client's side, for the upstream to connect to. */
  transport: Transport;
  /** The server's side (closing it drops the connection). */
  serverSide: InMemoryTransport;
  /** Resolves when the server side has closed. */
  closed: Promise<void>;
}

/** A real SDK server in process, with `tools` and a `call` handler the test writes. */
export function inProcessServer(
  tools: Tool[],
  call: (
    name: string,
    args: Record<string, unknown>,
    serverSide: InMemoryTransport,
  ) => Promise<CallToolResult>,
  opts: { beforeList?: () => Promise<void> } = {},
): InProcessServer {
  const [client, serverSide] = InMemoryTransport.createLinkedPair();
  const s = new Server({ name: "up", version: "1" }, { capabilities: { tools: {} } });
  s.setRequestHandler(ListToolsRequestSchema, async () => {
    await opts.beforeList?.();
    return { tools };
  });
  s.setRequestHandler(
    CallToolRequestSchema,
    (req) => call(req.params.name, req.params.arguments ?? {}, serverSide),
  );
  let closed!: () => void;
  const done = new Promise<void>((r) => (closed = r));
  void s.connect(serverSide).then(() => {
    const prev = serverSide.onclose;
    serverSide.onclose = () => {
      prev?.();
      closed();
    };
  });
  return { transport: client, serverSide, closed: done };
}

export const tool = (name: string, readOnly = true): Tool => ({
  name,
  inputSchema: { type: "object" },
  annotations: { readOnlyHint: readOnly },
});

/** Let pending promise callbacks and in-memory messages run. */
export async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((r) => setTimeout(r, 0));
}
