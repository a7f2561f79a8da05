/**
 * Bench section: the same tool call through every chain a host could use, in one run:
 * direct stdio; hermit serve (session); host → hermit relay → hermit service → upstream; and the
 * same relay chain built from peers, mcp-remote (stdio → HTTP) → supergateway (HTTP → stdio).
 * Every client, service and gateway it starts is stopped before it returns, or throws.
 */
import { mkdtempSync } from "node:fs";
import path from "node:path";
import { callLatency, type CallStats, memoryOf, stdioClient } from "./lib.ts";
import { startService, startSupergateway } from "./service.ts";

export interface ChainRow {
  label: string;
  stats: CallStats;
  rssMiB: number;
  processes: number;
}

export async function chains(
  opts: {
    hermit: string;
    everything: string;
    sessionAdapter: string;
    standaloneAdapter: string;
    root: string;
    /** The run's scratch directory (mcp-remote's config dir goes here). */
    work: string;
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
    try {
      const stats = await callLatency(client.client, "echo", args, opts.calls);
      const mem = [client.pid, ...extraPids].map((p) => memoryOf(p, true));
      rows.push({
        label,
        stats,
        rssMiB: mem.reduce((a, m) => a + m.rss, 0),
        processes: mem.reduce((a, m) => a + m.processes, 0),
      });
    } finally {
      await client.close();
    }
  };

  await measure("direct stdio (client → server)", await stdioClient("node", [opts.everything]));
  await measure(
    "hermit serve (client → hermit → server)",
    await stdioClient(opts.hermit, ["serve", opts.sessionAdapter]),
  );

  // hermit relay chain: start the service first so the relay attaches, not launches
  const svc = await startService(opts.hermit, opts.standaloneAdapter);
  try {
    const relay = await stdioClient(opts.hermit, ["serve", opts.standaloneAdapter]);
    await measure("hermit relay → hermit service → server", relay, [svc.pid]);
  } finally {
    await svc.stop();
  }

  // the peers' chain: mcp-remote (stdio → HTTP) → supergateway (stateful Streamable HTTP → stdio)
  const gw = await startSupergateway(opts.root, opts.everything);
  try {
    const home = mkdtempSync(path.join(opts.work, "mcp-remote-"));
    const remote = await stdioClient("node", [
      path.join(opts.root, "node_modules", "mcp-remote", "dist", "proxy.js"),
      gw.url,
      "--transport",
      "http-only",
      "--silent",
    ], { HOME: home, MCP_REMOTE_CONFIG_DIR: home });
    await measure("mcp-remote → supergateway → server", remote, [gw.pid]);
  } finally {
    await gw.stop();
  }
  return rows;
}
