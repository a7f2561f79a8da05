/**
 * Bench section: N host sessions calling at once. One hermit service shared by N relays; the
 * peers' equivalent, N mcp-remote → one supergateway `--stateful`; N separate `hermit serve`
 * sessions (each with its own upstream); and N separate servers run directly: every process with
 * its memory, calls per second, p50 and p99 with all sessions calling at once, and the time from
 * nothing running to every session connected (the shared backend's start-up included).
 */
import { mkdtempSync } from "node:fs";
import path from "node:path";
import { percentile, processesOf, type ProcMem, stdioClient } from "./lib.ts";
import { type Background, startService, startSupergateway } from "./service.ts";

export interface SessionsRow {
  label: string;
  /** Sessions that connected (of the N asked for). */
  connected: number;
  procs: ProcMem[];
  perSecond: number;
  p50: number;
  p99: number;
  startMs: number;
}

type Client = Awaited<ReturnType<typeof stdioClient>>;

/** All sessions call `echo` at once, `callsEach` times each; a failed call fails the row. */
async function load(
  clients: Client[],
  callsEach: number,
): Promise<{ perSecond: number; p50: number; p99: number }> {
  const times: number[] = [];
  const t0 = performance.now();
  await Promise.all(clients.map(async (c) => {
    for (let i = 0; i < callsEach; i++) {
      const s = performance.now();
      const r = await c.client.callTool({ name: "echo", arguments: { message: `m${i}` } });
      times.push((performance.now() - s) * 1000);
      if (r.isError) throw new Error(`echo failed: ${JSON.stringify(r.content)}`);
    }
  }));
  const seconds = (performance.now() - t0) / 1000;
  return { perSecond: times.length / seconds, p50: percentile(times, 50), p99: percentile(times, 99) };
}

/**
 * `n` sessions of one command, connected at once. Sessions that fail to connect are counted (and
 * the first reason told on stderr), not fatal: a row reports how many connected. None connecting
 * fails the row.
 */
async function connectAll(
  n: number,
  command: string,
  args: string[],
  env: () => Record<string, string> = () => ({}),
): Promise<Client[]> {
  const settled = await Promise.allSettled(
    Array.from({ length: n }, () => stdioClient(command, args, env())),
  );
  const clients = settled.flatMap((s) => s.status === "fulfilled" ? [s.value] : []);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (!failed) return clients;
  const why = `${n - clients.length} of ${n} sessions of ${command} ${args.join(" ")} did not connect: ${
    failed.reason instanceof Error ? failed.reason.message : failed.reason
  }`;
  if (clients.length === 0) throw new Error(why);
  console.error(`bench: ${why}`);
  return clients;
}

async function run(
  label: string,
  start: () => Promise<Client[]>,
  extraPids: () => number[],
  callsEach: number,
  roles: (clients: Client[]) => Map<number, string> = () => new Map(),
): Promise<SessionsRow> {
  const t0 = performance.now();
  const clients = await start();
  const startMs = performance.now() - t0;
  try {
    const r = await load(clients, callsEach);
    const procs = processesOf([...clients.map((c) => c.pid), ...extraPids()], roles(clients));
    return { label, connected: clients.length, procs, startMs, ...r };
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}

/**
 * Rows in order: the shared hermit service, the peers' shared gateway, N × hermit serve, N × the
 * server alone (the reference).
 */
export async function sessions(
  opts: {
    hermit: string;
    everything: string;
    sessionAdapter: string;
    standaloneAdapter: string;
    root: string;
    work: string;
    n: number;
    callsEach: number;
  },
): Promise<SessionsRow[]> {
  const rows: SessionsRow[] = [];
  let svc: Background | undefined;
  try {
    rows.push(
      await run(
        `${opts.n} relays → one hermit service → one server`,
        async () => {
          svc = await startService(opts.hermit, opts.standaloneAdapter);
          return await connectAll(opts.n, opts.hermit, ["serve", opts.standaloneAdapter]);
        },
        () => [svc!.pid],
        opts.callsEach,
        (clients) => new Map(clients.map((c) => [c.pid, "hermit relay"])),
      ),
    );
  } finally {
    await svc?.stop();
  }
  let gw: Background | undefined;
  try {
    const proxy = path.join(opts.root, "node_modules", "mcp-remote", "dist", "proxy.js");
    rows.push(
      await run(
        `${opts.n} mcp-remote → one supergateway --stateful`,
        async () => {
          gw = await startSupergateway(opts.root, opts.everything);
          return await connectAll(
            opts.n,
            "node",
            [proxy, gw.url, "--transport", "http-only", "--silent"],
            () => {
              const home = mkdtempSync(path.join(opts.work, "mcp-remote-"));
              return { HOME: home, MCP_REMOTE_CONFIG_DIR: home };
            },
          );
        },
        () => [gw!.pid],
        opts.callsEach,
      ),
    );
  } finally {
    await gw?.stop();
  }
  rows.push(
    await run(
      `${opts.n} × hermit serve, each with its own server`,
      () => connectAll(opts.n, opts.hermit, ["serve", opts.sessionAdapter]),
      () => [],
      opts.callsEach,
    ),
  );
  rows.push(
    await run(
      `${opts.n} × the server alone (no hermit)`,
      () => connectAll(opts.n, "node", [opts.everything]),
      () => [],
      opts.callsEach,
    ),
  );
  return rows;
}
