/**
 * Standalone-service helpers: a fixture adapter (the memory server from node_modules, started with
 * node so it starts fast), the endpoint file, an HTTP MCP client with the bearer token, and the
 * processes that make up a service.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Endpoint } from "../../src/service/endpoint.ts";
import { root } from "./hermit.ts";
import { allProcesses, cmdline } from "./procs.ts";

export const memoryServer = path.join(
  root,
  "node_modules",
  "@modelcontextprotocol",
  "server-memory",
  "dist",
  "index.js",
);

export function writeStandaloneAdapter(
  dir: string,
  opts: { hostLaunch?: boolean; idle?: number; name?: string } = {},
): void {
  writeFileSync(
    path.join(dir, "hermit.yaml"),
    `name: ${opts.name ?? "shared"}
exports: { tools: [read_graph, create_entities, search_nodes] }
mcp_servers:
  memory:
    command: node
    args: [${JSON.stringify(memoryServer)}]
    env: { MEMORY_FILE_PATH: "${path.join(dir, "graph.jsonl")}" }
    tools: { include: [read_graph, create_entities, search_nodes], resources: false }
serve:
  lifecycle: standalone
  host_launch: ${opts.hostLaunch ?? true}
  idle_shutdown_seconds: ${opts.idle ?? 300}
  instructions: SERVICE.md
`,
  );
  writeFileSync(path.join(dir, "SERVICE.md"), "Run it with hermit serve . --standalone\n");
}

export type EndpointFile = Endpoint;

export function readEndpointFile(dir: string): EndpointFile | undefined {
  try {
    return JSON.parse(readFileSync(path.join(dir, ".serve", "endpoint"), "utf8"));
  } catch {
    return undefined;
  }
}

export async function httpClient(url: string, token?: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: token ? { headers: { Authorization: `Bearer ${token}` } } : undefined,
  });
  const client = new Client({ name: "hermit-test-http", version: "0" });
  await client.connect(transport, { timeout: 30_000 });
  return client;
}

/** Live hermit service processes for the adapter in `dir`. */
export function servicePids(dir: string): number[] {
  return allProcesses().filter((p) => p.state !== "Z").map((p) => p.pid)
    .filter((pid) => {
      const c = cmdline(pid);
      return c.includes(`serve ${dir} --standalone`) || c.includes(`serve ${dir}/ --standalone`);
    });
}

/** Live memory-server processes started for the adapter in `dir`. */
export function memoryPids(dir: string): number[] {
  return allProcesses().filter((p) => p.state !== "Z").map((p) => p.pid)
    .filter((pid) => {
      try {
        return cmdline(pid).includes(memoryServer) &&
          readFileSync(`/proc/${pid}/environ`, "utf8").includes(path.join(dir, "graph.jsonl"));
      } catch {
        return false;
      }
    });
}
