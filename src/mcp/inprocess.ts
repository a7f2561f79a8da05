/**
 * An MCP client wired to a session server in the same process (linked in-memory transports), so
 * `hermit call` goes through exactly the server handlers and gateway a host's call goes through.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import {
  type ClientCapabilities,
  type ElicitRequest,
  ElicitRequestSchema,
  type ElicitResult,
} from "@modelcontextprotocol/sdk/types.js";
import { VERSION } from "../version.ts";
import type { Gateway } from "./gateway.ts";
import { createSessionServer } from "./server.ts";

export interface InProcessOptions {
  /** Answers approval and elicitation requests (e.g. a TTY prompt); without it none are possible. */
  elicit?: (params: ElicitRequest["params"]) => Promise<ElicitResult>;
}

export async function connectInProcess(
  gateway: Gateway,
  opts: InProcessOptions = {},
): Promise<{ client: Client; close(): Promise<void> }> {
  const session = createSessionServer(gateway, "hermit-call");
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const capabilities: ClientCapabilities = opts.elicit ? { elicitation: {} } : {};
  const client = new Client({ name: "hermit-call", version: VERSION }, { capabilities });
  if (opts.elicit) client.setRequestHandler(ElicitRequestSchema, (req) => opts.elicit!(req.params));
  await session.connect(serverSide);
  await client.connect(clientSide);
  return {
    client,
    close: async () => {
      session.detach();
      await client.close().catch(() => {});
      await session.server.close().catch(() => {});
    },
  };
}
