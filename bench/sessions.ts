/**
 * Bench section: N host sessions. One hermit service shared by N relays, against N separate
 * `hermit serve` sessions (each with its own upstream) and N separate servers run directly:
 * processes, total RSS, calls per second and p99 with all sessions calling at once, and the time
 * from nothing running to every session connected (the shared service's start-up included).
 */
import { memoryOf, percentile, stdioClient } from "./lib.ts";
import { type Background, startService } from "./service.ts";

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

/** `n` sessions of one command, connected at once; if any fails, the others are closed. */
async function connectAll(n: number, command: string, args: string[]): Promise<Client[]> {
  const settled = await Promise.allSettled(Array.from({ length: n }, () => stdioClient(command, args)));
  const clients = settled.flatMap((s) => s.status === "fulfilled" ? [s.value] : []);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (!failed) return clients;
  await Promise.all(clients.map((c) => c.close()));
  throw new Error(
    `${n - clients.length} of ${n} sessions of ${command} ${args.join(" ")} did not connect: ${
      failed.reason instanceof Error ? failed.reason.message : failed.reason
    }`,
  );
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
  try {
    const r = await load(clients, callsEach);
    const pids = [...clients.map((c) => c.pid), ...extraPids()];
    const mem = pids.map((p) => memoryOf(p, true));
    return {
      label,
      processes: mem.reduce((a, m) => a + m.processes, 0),
      rssMiB: mem.reduce((a, m) => a + m.rss, 0),
      startMs,
      ...r,
    };
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}

/** Rows in order: the shared service, N × hermit serve, N × the server alone (the reference). */
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
      ),
    );
  } finally {
    await svc?.stop();
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
