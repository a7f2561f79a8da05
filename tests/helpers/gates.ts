/**
 * For the gate-stack e2e tests: an adapter in front of the hostile fixture server
 * (tests/fixtures/servers/hostile.mjs), the standalone service as an entry path, and checks for
 * hidden characters.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { fixtures, hermitBin } from "./hermit.ts";
import { alive, waitFor } from "./procs.ts";

export const HOSTILE = path.join(fixtures, "servers", "hostile.mjs");

/** The hostile server's tools, and a command tool that prints its environment. */
export const GATES_TOOLS = [
  "tagged",
  "leaky_error",
  "thrown_error",
  "huge",
  "write_note",
  "write_unannotated",
  "read_note",
  "poisoned",
  "ask_sampling",
  "ask_elicitation",
  "dump_env",
  "tagged_schema",
  "env_tool",
];

/**
 * Write `DIR/hermit.yaml`: mcp_servers.hostile (node hostile.mjs, declared env HOSTILE_LOG and
 * UPSTREAM_DECLARED) with the given trust and limits, and tools.env_tool.
 */
export function writeGatesAdapter(
  dir: string,
  opts: { trust?: string; sampling?: string; elicitation?: string } = {},
): string {
  mkdirSync(dir, { recursive: true });
  const yaml = [
    "name: gates",
    "exports:",
    `  tools: [${GATES_TOOLS.join(", ")}]`,
    "tools:",
    "  env_tool:",
    "    description: Prints its environment",
    `    run: [node, -e, "process.stdout.write(JSON.stringify(process.env))"]`,
    '    env: { TOOL_DECLARED: "${env:DECLARED_SRC}" }',
    "    read_only: true",
    "mcp_servers:",
    "  hostile:",
    "    command: node",
    `    args: [${JSON.stringify(HOSTILE)}]`,
    '    env: { HOSTILE_LOG: "${HOSTILE_LOG}", UPSTREAM_DECLARED: "${env:DECLARED_SRC}" }',
    ...(opts.trust ? [`    trust: ${opts.trust}`] : []),
    ...(opts.sampling ? [`    sampling: ${opts.sampling}`] : []),
    ...(opts.elicitation ? [`    elicitation: ${opts.elicitation}`] : []),
  ].join("\n") + "\n";
  writeFileSync(path.join(dir, "hermit.yaml"), yaml);
  return dir;
}

/** Code points U+E0000–U+E007F that are not part of an emoji tag sequence (a flag). */
export function strayTags(s: string): number {
  const withoutFlags = s.replace(/\u{1F3F4}[\u{E0020}-\u{E007E}]+\u{E007F}/gu, "");
  return [...withoutFlags.matchAll(/[\u{E0000}-\u{E007F}]/gu)].length;
}

export interface Service {
  url: string;
  token: string;
  pid: number;
  stderr(): string;
  /** SIGTERM, then wait for the process to exit (SIGKILL after 10 s). */
  stop(): Promise<void>;
}

/** `hermit serve DIR --standalone` in the foreground, ready once DIR/.serve/endpoint is written. */
export async function startService(dir: string, env: Record<string, string | undefined>): Promise<Service> {
  const child = spawn(hermitBin(), ["serve", dir, "--standalone"], {
    env: { ...process.env, ...env } as Record<string, string>,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let err = "";
  child.stderr.setEncoding("utf8").on("data", (d) => (err += d));
  child.stdout.resume();
  const pid = child.pid!;
  const file = path.join(dir, ".serve", "endpoint");
  const ep = await waitFor(() => {
    if (child.exitCode !== null) throw new Error(`the service exited: ${err}`);
    if (!existsSync(file)) return undefined;
    const e = JSON.parse(readFileSync(file, "utf8")) as { url: string; token: string; pid: number };
    return e.pid === pid ? e : undefined;
  }, { timeoutMs: 60_000, what: `the service's endpoint file (stderr: ${err})` });
  return {
    url: ep.url,
    token: ep.token,
    pid,
    stderr: () => err,
    stop: async () => {
      if (!alive(pid)) return;
      child.kill("SIGTERM");
      await waitFor(() => !alive(pid), { timeoutMs: 10_000, what: "the service to stop" }).catch(() =>
        child.kill("SIGKILL")
      );
    },
  };
}

/** An MCP client on the service over Streamable HTTP, with the bearer token. */
export async function connectHttp(
  svc: Service,
  opts: { capabilities?: ClientCapabilities; setup?: (c: Client) => void } = {},
): Promise<Client> {
  const client = new Client({ name: "hermit-test-http", version: "0" }, {
    capabilities: opts.capabilities ?? {},
  });
  opts.setup?.(client);
  const transport = new StreamableHTTPClientTransport(new URL(svc.url), {
    requestInit: { headers: { Authorization: `Bearer ${svc.token}` } },
  });
  await client.connect(transport, { timeout: 60_000 });
  return client;
}
