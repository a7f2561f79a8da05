/**
 * Bench section: the same tool call through every chain a host could use, in one run:
 * direct stdio; hermit serve (session); host → hermit relay → hermit service → upstream; and the
 * same relay chain built from peers, mcp-remote (stdio → HTTP) → supergateway (HTTP → stdio).
 */
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { callLatency, type CallStats, memoryOf, sleep, stdioClient } from "./lib.ts";

export interface ChainRow {
  label: string;
  stats: CallStats;
  rssMiB: number;
  processes: number;
}

async function freePort(): Promise<number> {
  const { createServer } = await import("node:net");
  return await new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function waitHttp(url: string, deadlineMs = 60_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (Date.now() < end) {
    try {
      await fetch(url, { signal: AbortSignal.timeout(1000) });
      return;
    } catch {
      await sleep(100);
    }
  }
  throw new Error(`${url} did not come up`);
}

export async function chains(
  opts: {
    hermit: string;
    everything: string;
    sessionAdapter: string;
    standaloneAdapter: string;
    root: string;
    calls: number;
  },
): Promise<ChainRow[]> {
  const args = { message: "hello from the benchmark" };
  const rows: ChainRow[] = [];
  const measure = async (
    label: string,
    client: Awaited<ReturnType<typeof stdioClient>>,
    extraPids: number[] = [],
  ) => {
    const stats = await callLatency(client.client, "echo", args, opts.calls);
    const mem = [client.pid, ...extraPids].map((p) => memoryOf(p, true));
    rows.push({
      label,
      stats,
      rssMiB: mem.reduce((a, m) => a + m.rss, 0),
      processes: mem.reduce((a, m) => a + m.processes, 0),
    });
    await client.close();
  };

  await measure("direct stdio (client → server)", await stdioClient("node", [opts.everything]));
  await measure(
    "hermit serve (client → hermit → server)",
    await stdioClient(opts.hermit, ["serve", opts.sessionAdapter]),
  );

  // hermit relay chain: start the service first so the relay attaches, not launches
  const svc = spawn(opts.hermit, ["serve", opts.standaloneAdapter, "--standalone"], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  let out = "";
  svc.stdout.setEncoding("utf8").on("data", (d) => (out += d));
  while (!/http:\/\/\S+\/mcp/.test(out)) await sleep(50);
  const relay = await stdioClient(opts.hermit, ["serve", opts.standaloneAdapter]);
  await measure("hermit relay → hermit service → server", relay, [svc.pid!]);
  process.kill(svc.pid!, "SIGTERM");

  // the peers' chain: mcp-remote (stdio → HTTP) → supergateway (stateful Streamable HTTP → stdio)
  const port = await freePort();
  const gw = spawn("node", [
    path.join(opts.root, "node_modules", "supergateway", "dist", "index.js"),
    "--stdio",
    `node ${opts.everything}`,
    "--outputTransport",
    "streamableHttp",
    "--stateful",
    "--port",
    String(port),
    "--logLevel",
    "none",
  ], { stdio: "ignore", detached: true });
  await waitHttp(`http://127.0.0.1:${port}/mcp`);
  const home = mkdtempSync(path.join(os.tmpdir(), "hermit-bench-mcp-remote-"));
  const remote = await stdioClient("node", [
    path.join(opts.root, "node_modules", "mcp-remote", "dist", "proxy.js"),
    `http://127.0.0.1:${port}/mcp`,
    "--transport",
    "http-only",
    "--silent",
  ], { HOME: home, MCP_REMOTE_CONFIG_DIR: home });
  await measure("mcp-remote → supergateway → server", remote, [gw.pid!]);
  try {
    process.kill(-gw.pid!, "SIGTERM");
  } catch { /* gone */ }
  return rows;
}
