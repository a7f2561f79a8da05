/**
 * Bench section: 32 host sessions. One hermit service shared by 32 relays, against 32 separate
 * `hermit serve` sessions (each with its own upstream) and 32 separate servers run directly:
 * processes, total RSS, calls per second and p99 with all sessions calling at once.
 */
import { spawn } from "node:child_process";
import process from "node:process";
import { memoryOf, percentile, sleep, stdioClient } from "./lib.ts";

export interface SessionsRow {
  label: string;
  processes: number;
  rssMiB: number;
  perSecond: number;
  p50: number;
  p99: number;
  startMs: number;
}

type Client = Awaited<ReturnType<typeof stdioClient>>;

async function load(
  clients: Client[],
  callsEach: number,
): Promise<{ perSecond: number; p50: number; p99: number }> {
  const times: number[] = [];
  const t0 = performance.now();
  await Promise.all(clients.map(async (c) => {
    for (let i = 0; i < callsEach; i++) {
      const s = performance.now();
      await c.client.callTool({ name: "echo", arguments: { message: `m${i}` } });
      times.push((performance.now() - s) * 1000);
    }
  }));
  const seconds = (performance.now() - t0) / 1000;
  return { perSecond: times.length / seconds, p50: percentile(times, 50), p99: percentile(times, 99) };
}

async function run(
  label: string,
  start: () => Promise<Client[]>,
  extraPids: () => number[],
  callsEach: number,
): Promise<SessionsRow> {
  const t0 = performance.now();
  const clients = await start();
  const startMs = performance.now() - t0;
  const r = await load(clients, callsEach);
  const pids = [...clients.map((c) => c.pid), ...extraPids()];
  const mem = pids.map((p) => memoryOf(p, true));
  await Promise.all(clients.map((c) => c.close()));
  return {
    label,
    processes: mem.reduce((a, m) => a + m.processes, 0),
    rssMiB: mem.reduce((a, m) => a + m.rss, 0),
    startMs,
    ...r,
  };
}

export async function sessions(
  opts: {
    hermit: string;
    everything: string;
    sessionAdapter: string;
    standaloneAdapter: string;
    n: number;
    callsEach: number;
  },
): Promise<SessionsRow[]> {
  const many = (cmd: string, args: string[]) => () =>
    Promise.all(Array.from({ length: opts.n }, () => stdioClient(cmd, args)));
  const rows: SessionsRow[] = [];
  const svc = spawn(opts.hermit, ["serve", opts.standaloneAdapter, "--standalone"], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  let out = "";
  svc.stdout.setEncoding("utf8").on("data", (d) => (out += d));
  while (!/http:\/\/\S+\/mcp/.test(out)) await sleep(50);
  rows.push(
    await run(
      `${opts.n} relays → one hermit service → one server`,
      many(opts.hermit, ["serve", opts.standaloneAdapter]),
      () => [svc.pid!],
      opts.callsEach,
    ),
  );
  process.kill(svc.pid!, "SIGTERM");
  rows.push(
    await run(
      `${opts.n} × hermit serve, each with its own server`,
      many(opts.hermit, ["serve", opts.sessionAdapter]),
      () => [],
      opts.callsEach,
    ),
  );
  rows.push(
    await run(
      `${opts.n} × the server alone (no hermit)`,
      many("node", [opts.everything]),
      () => [],
      opts.callsEach,
    ),
  );
  return rows;
}
