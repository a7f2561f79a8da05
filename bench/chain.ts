/**
 * Bench section: one host session through every path a host could use, in one run: direct
 * stdio; `hermit serve` (session adapter); hermit relay → warm hermit service → upstream; and the
 * same relay chain built from peers, mcp-remote (stdio → HTTP) → warm supergateway (HTTP →
 * stdio). Per path: ready (spawn to the first `tools/list` answer, the backend already warm),
 * sequential call latency, and every process it runs with its memory. A `baseline` binary adds
 * the hermit paths again, measured the same way in the same run. Every client, service and
 * gateway it starts is stopped before it returns, or throws.
 */
import { mkdtempSync } from "node:fs";
import path from "node:path";
import {
  callLatency,
  type CallStats,
  median,
  processesOf,
  type ProcMem,
  spawnToList,
  stdioClient,
} from "./lib.ts";
import { startService, startSupergateway } from "./service.ts";

export interface PathRow {
  label: string;
  readyMs: number;
  stats: CallStats;
  /** Every process the path runs, the shared backend included. */
  procs: ProcMem[];
  /** The processes one more session adds (the rest is shared, or the upstream itself). */
  perSession: (p: ProcMem) => boolean;
}

export interface ChainOptions {
  hermit: string;
  /** Another hermit binary (e.g. the previous release) measured in the same run, or undefined. */
  baseline?: string;
  everything: string;
  sessionAdapter: string;
  standaloneAdapter: string;
  root: string;
  /** The run's scratch directory (mcp-remote's config dirs go here). */
  work: string;
  calls: number;
  spawns: number;
}

const isHermit = (p: ProcMem) => p.role.startsWith("hermit") || p.role.startsWith("watchdog");

export async function chains(opts: ChainOptions): Promise<PathRow[]> {
  const args = { message: "hello from the benchmark" };
  const readyOf = async (cmd: string, argv: string[], env: Record<string, string> = {}) => {
    const runs: number[] = [];
    for (let i = 0; i < opts.spawns; i++) runs.push(await spawnToList(cmd, argv, env, opts.work));
    return median(runs);
  };
  /** Calls and memory first (so the ready runs' sessions cannot weigh on them), then ready. */
  const measure = async (
    label: string,
    client: Awaited<ReturnType<typeof stdioClient>>,
    ready: () => Promise<number>,
    shared: number[],
    roles: Map<number, string>,
    perSession: (p: ProcMem) => boolean,
  ): Promise<PathRow> => {
    let stats: CallStats;
    let procs: ProcMem[];
    try {
      stats = await callLatency(client.client, "echo", args, opts.calls);
      procs = processesOf([client.pid, ...shared], roles);
    } finally {
      await client.close();
    }
    return { label, readyMs: await ready(), stats, procs, perSession };
  };

  const rows: PathRow[] = [];
  rows.push(
    await measure(
      "client → server, direct stdio",
      await stdioClient("node", [opts.everything]),
      () => readyOf("node", [opts.everything]),
      [],
      new Map(),
      () => false,
    ),
  );
  const hermits = [
    { bin: opts.hermit, tag: "" },
    ...opts.baseline ? [{ bin: opts.baseline, tag: " (baseline)" }] : [],
  ];
  for (const { bin, tag } of hermits) {
    rows.push(
      await measure(
        `client → \`hermit serve\` → server${tag}`,
        await stdioClient(bin, ["serve", opts.sessionAdapter]),
        () => readyOf(bin, ["serve", opts.sessionAdapter]),
        [],
        new Map(),
        isHermit,
      ),
    );
    // the relay attaches to a service that is already running (warm), as every session but the first
    const svc = await startService(bin, opts.standaloneAdapter);
    try {
      const relay = await stdioClient(bin, ["serve", opts.standaloneAdapter]);
      rows.push(
        await measure(
          `client → hermit relay → warm hermit service → server${tag}`,
          relay,
          () => readyOf(bin, ["serve", opts.standaloneAdapter]),
          [svc.pid],
          new Map([[relay.pid, "hermit relay"]]),
          (p) => p.role === "hermit relay",
        ),
      );
    } finally {
      await svc.stop();
    }
  }

  // the peers' chain: mcp-remote (stdio → HTTP) → supergateway (stateful Streamable HTTP → stdio)
  const gw = await startSupergateway(opts.root, opts.everything);
  try {
    const remote = (): [string, string[], Record<string, string>] => {
      const home = mkdtempSync(path.join(opts.work, "mcp-remote-"));
      return [
        "node",
        [
          path.join(opts.root, "node_modules", "mcp-remote", "dist", "proxy.js"),
          gw.url,
          "--transport",
          "http-only",
          "--silent",
        ],
        { HOME: home, MCP_REMOTE_CONFIG_DIR: home },
      ];
    };
    rows.push(
      await measure(
        "client → mcp-remote → warm supergateway → server",
        await stdioClient(...remote()),
        () => readyOf(...remote()),
        [gw.pid],
        new Map(),
        (p) => p.role.startsWith("mcp-remote"),
      ),
    );
  } finally {
    await gw.stop();
  }
  return rows;
}
