/**
 * An MCP client connected to `hermit serve DIR` over stdio, as a host would run it (in this
 * process's environment plus `opts.env`, with hermitEnv's HERMIT_HOME), with the hermit process's
 * pid and stderr at hand for assertions.
 */
import process from "node:process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { type Flavor, hermitArgv, hermitEnv } from "./hermit.ts";

export interface HermitSession {
  client: Client;
  pid: number;
  stderr(): string;
  close(): Promise<void>;
}

export async function connectServe(
  dir: string,
  opts: {
    env?: Record<string, string | undefined>;
    cwd?: string;
    flavor?: Flavor;
    capabilities?: ClientCapabilities;
    args?: string[];
    timeoutMs?: number;
    /** Called before connecting, e.g. to set elicitation or sampling handlers. */
    setup?: (client: Client) => void;
  } = {},
): Promise<HermitSession> {
  const [cmd, ...pre] = hermitArgv(opts.flavor);
  const transport = new StdioClientTransport({
    command: cmd,
    args: [...pre, "serve", dir, ...(opts.args ?? [])],
    env: hermitEnv({ ...process.env, ...opts.env }) as Record<string, string>,
    cwd: opts.cwd,
    stderr: "pipe",
  });
  let err = "";
  transport.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  const client = new Client({ name: "hermit-test", version: "0" }, { capabilities: opts.capabilities ?? {} });
  opts.setup?.(client);
  await client.connect(transport, { timeout: opts.timeoutMs ?? 90_000 });
  const pid = transport.pid!;
  return {
    client,
    pid,
    stderr: () => err,
    close: async () => {
      await client.close().catch(() => {});
      try {
        process.kill(pid, "SIGKILL");
      } catch { /* exited */ }
    },
  };
}

export function textOf(result: unknown): string {
  return (((result as { content?: unknown }).content as { type: string; text?: string }[]) ?? []).map((c) =>
    c.text ?? ""
  ).join("\n");
}
