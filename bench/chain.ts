/**
 * Bench section: one host session through every path a host could use, in one run: direct
 * stdio; `hermit serve` (session adapter); hermit relay → warm hermit service → upstream; the
 * floor under that relay, a minimal Bun relay (`floor_relay.ts`) on the same service; and the
 * same relay chain built from peers, mcp-remote (stdio → HTTP) → warm supergateway (HTTP →
 * stdio). Per path: ready (spawn to the first `tools/list` answer, the backend already warm),
 * sequential call latency, and every process it runs with its memory and the CPU it used per call
 * (steadier than latency on a busy machine: waiting is not counted), and the memory again after
 * every session has been quiet past hermit's idle release. A `baseline` binary adds the
 * hermit paths again, measured the same way in the same run. Every path's session is open
 * at once and their calls are interleaved (rounds of a tenth of the calls, path after path), so
 * a machine's drift and whichever path happens to go first weigh on all of them alike. Every
 * client, service and gateway it starts is stopped before it returns, or throws.
 */
import { mkdtempSync } from "node:fs";
import path from "node:path";
import {
  callSamples,
  type CallStats,
  cpuMicros,
  median,
  processesOf,
  type ProcMem,
  spawnToList,
  statsOf,
  stdioClient,
  treeOf,
} from "./lib.ts";
import { startService, startSupergateway } from "./service.ts";
import { DEFAULT_IDLE_RELEASE_SECONDS } from "../src/platform/idle_release.ts";

export interface PathRow {
  label: string;
  readyMs: number;
  stats: CallStats;
  /** Every process the path runs, the shared backend included. */
  procs: ProcMem[];
  /** The same processes again after `QUIET_MS` without calls (hermit gives memory back when idle). */
  quiet: ProcMem[];
  /** CPU µs per call, by pid, while this path's calls ran (every thread of each process). */
  cpuPerCall: Map<number, number>;
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
  /** The baseline's own standalone adapter: one service per adapter directory runs at a time. */
  baselineStandaloneAdapter?: string;
  root: string;
  /** `bench/floor_relay.ts` compiled (the floor under the relay row), or undefined. */
  floorRelay?: string;
  /** The run's scratch directory (mcp-remote's config dirs go here). */
  work: string;
  calls: number;
  spawns: number;
}

export const FLOOR_RELAY_PATH = "client → the floor: a minimal Bun relay → warm hermit service → server";
const FLOOR_RELAY_ROLE = "minimal Bun relay (floor)";

const isHermit = (p: ProcMem) => p.role.startsWith("hermit") || p.role.startsWith("watchdog");

/** How long every session stays quiet before its memory is measured again: past hermit's idle release. */
export const QUIET_MS = (DEFAULT_IDLE_RELEASE_SECONDS + 5) * 1000;

/** Rounds the calls are split into, path after path. */
const ROUNDS = 10;
const WARMUP = 20;

/** One path while it is measured: its open session, the backends it shares, how to start it again. */
interface OpenPath {
  label: string;
  client: Awaited<ReturnType<typeof stdioClient>>;
  /** What a fresh session runs (made anew for each: mcp-remote wants a config dir of its own). */
  spawn: () => [string, string[], Record<string, string>?];
  shared: number[];
  roles: Map<number, string>;
  perSession: (p: ProcMem) => boolean;
  times: number[];
  ms: number;
  /** CPU µs used by each pid of the path during its calls, summed over the rounds. */
  cpu: Map<number, number>;
}

export async function chains(opts: ChainOptions): Promise<PathRow[]> {
  const args = { message: "hello from the benchmark" };
  const open: OpenPath[] = [];
  const stops: (() => Promise<void>)[] = [];
  const add = async (
    label: string,
    spawn: OpenPath["spawn"],
    shared: number[] = [],
    perSession: (p: ProcMem) => boolean = () => false,
    role?: string,
  ) => {
    const [cmd, argv, env] = spawn();
    const client = await stdioClient(cmd, argv, env);
    open.push({
      label,
      client,
      spawn,
      shared,
      roles: new Map(role ? [[client.pid, role]] : []),
      perSession,
      times: [],
      ms: 0,
      cpu: new Map(),
    });
  };
  try {
    await add("client → server, direct stdio", () => ["node", [opts.everything]]);
    const hermits = [
      { bin: opts.hermit, tag: "", standalone: opts.standaloneAdapter },
      ...opts.baseline
        ? [{
          bin: opts.baseline,
          tag: " (baseline)",
          standalone: opts.baselineStandaloneAdapter ?? opts.standaloneAdapter,
        }]
        : [],
    ];
    for (const { bin, tag, standalone } of hermits) {
      await add(
        `client → \`hermit serve\` → server${tag}`,
        () => [bin, ["serve", opts.sessionAdapter]],
        [],
        isHermit,
      );
      // the relay attaches to a service that is already running (warm), as every session but the first
      const svc = await startService(bin, standalone);
      stops.push(() => svc.stop());
      await add(
        `client → hermit relay → warm hermit service → server${tag}`,
        () => [bin, ["serve", standalone]],
        [svc.pid],
        (p) => p.role === "hermit relay",
        "hermit relay",
      );
      if (opts.floorRelay && tag === "") {
        const endpointFile = path.join(standalone, ".serve", "endpoint");
        await add(
          FLOOR_RELAY_PATH,
          () => [opts.floorRelay!, [endpointFile]],
          [svc.pid],
          (p) => p.role === FLOOR_RELAY_ROLE,
          FLOOR_RELAY_ROLE,
        );
      }
    }
    // the peers' chain: mcp-remote (stdio → HTTP) → supergateway (stateful Streamable HTTP → stdio)
    const gw = await startSupergateway(opts.root, opts.everything);
    stops.push(() => gw.stop());
    await add(
      "client → mcp-remote → warm supergateway → server",
      () => {
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
      },
      [gw.pid],
      (p) => p.role.startsWith("mcp-remote"),
    );

    // calls: every path warmed, then interleaved round by round
    for (const p of open) await callSamples(p.client.client, "echo", args, WARMUP);
    const perRound = Math.max(1, Math.ceil(opts.calls / ROUNDS));
    for (let round = 0; round < ROUNDS; round++) {
      for (const p of open) {
        const pids = treeOf([p.client.pid, ...p.shared]);
        const before = pids.map(cpuMicros);
        const got = await callSamples(p.client.client, "echo", args, perRound);
        pids.forEach((pid, i) => p.cpu.set(pid, (p.cpu.get(pid) ?? 0) + cpuMicros(pid) - before[i]));
        p.times.push(...got.times);
        p.ms += got.ms;
      }
    }
    // memory after the calls, every session still open
    const measured = open.map((p) => ({
      p,
      stats: statsOf(p.times, p.ms) as CallStats,
      procs: processesOf([p.client.pid, ...p.shared], p.roles),
      cpuPerCall: new Map([...p.cpu].map(([pid, us]) => [pid, us / p.times.length])),
    }));
    // and after a quiet spell, as a session spends most of its life
    await new Promise((r) => setTimeout(r, QUIET_MS));
    const quiet = open.map((p) => processesOf([p.client.pid, ...p.shared], p.roles));
    for (const p of open) await p.client.close();
    open.length = 0;
    // ready: a fresh session per spawn, the backends still warm
    const rows: PathRow[] = [];
    for (const [i, { p, stats, procs, cpuPerCall }] of measured.entries()) {
      const runs: number[] = [];
      for (let i = 0; i < opts.spawns; i++) {
        const [cmd, argv, env] = p.spawn();
        runs.push(await spawnToList(cmd, argv, env ?? {}, opts.work));
      }
      rows.push({
        label: p.label,
        readyMs: median(runs),
        stats,
        procs,
        quiet: quiet[i],
        cpuPerCall,
        perSession: p.perSession,
      });
    }
    return rows;
  } finally {
    for (const p of open) await p.client.close().catch(() => {});
    for (const stop of stops.reverse()) await stop().catch(() => {});
  }
}
