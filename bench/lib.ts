/**
 * Measurement helpers for `deno task bench`: sequential call latency through an MCP client,
 * spawn-to-first-`tools/list` with raw JSON-RPC (no client library in the way), and memory from
 * /proc. Everything is measured side by side in one run; results are medians and ratios.
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import process from "node:process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

export const median = (xs: number[]) => percentile(xs, 50);

export interface CallStats {
  p50: number;
  p99: number;
  perSecond: number;
}

/** `n` sequential calls of one tool (after `warmup` unmeasured ones); microseconds. */
export async function callLatency(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  n: number,
  warmup = 20,
): Promise<CallStats> {
  for (let i = 0; i < warmup; i++) await client.callTool({ name, arguments: args });
  const times: number[] = [];
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const s = performance.now();
    const r = await client.callTool({ name, arguments: args });
    times.push((performance.now() - s) * 1000);
    if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.content)}`);
  }
  return {
    p50: percentile(times, 50),
    p99: percentile(times, 99),
    perSecond: n / ((performance.now() - t0) / 1000),
  };
}

export async function stdioClient(
  command: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ client: Client; pid: number; close(): Promise<void> }> {
  const transport = new StdioClientTransport({
    command,
    args,
    env: { ...(process.env as Record<string, string>), ...env },
    stderr: "ignore",
  });
  const client = new Client({ name: "bench", version: "0" });
  await client.connect(transport, { timeout: 120_000 });
  return { client, pid: transport.pid!, close: () => closeQuietly(client, transport.pid!) };
}

export async function connected(transport: Transport): Promise<Client> {
  const client = new Client({ name: "bench", version: "0" });
  await client.connect(transport, { timeout: 120_000 });
  return client;
}

async function closeQuietly(client: Client, pid: number): Promise<void> {
  await client.close().catch(() => {});
  try {
    process.kill(pid, "SIGKILL");
  } catch { /* gone */ }
}

const HANDSHAKE = [
  {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "0" } },
  },
  { jsonrpc: "2.0", method: "notifications/initialized" },
  { jsonrpc: "2.0", id: 2, method: "tools/list" },
].map((m) => JSON.stringify(m) + "\n").join("");

/** Milliseconds from spawn to the `tools/list` response, writing the whole handshake at once. */
export function spawnToList(
  command: string,
  args: string[],
  env: Record<string, string> = {},
  cwd?: string,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(command, args, {
      stdio: ["pipe", "pipe", "ignore"],
      env: { ...process.env, ...env },
      cwd,
    });
    let buf = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`no tools/list from ${command} within 120 s`));
    }, 120_000);
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      buf += d;
      for (const line of buf.split("\n").slice(0, -1)) {
        if (line.includes('"id":2')) {
          const ms = performance.now() - t0;
          clearTimeout(timer);
          child.stdin.end();
          child.once("exit", () => resolve(ms));
          setTimeout(() => child.kill("SIGKILL"), 5000).unref?.();
          return;
        }
      }
    });
    child.stdin.write(HANDSHAKE);
  });
}

/** Resident and peak memory of a process and its descendants, in MiB. */
export function memoryOf(
  pid: number,
  withDescendants = true,
): { rss: number; peak: number; processes: number } {
  const pids = withDescendants ? [pid, ...descendants(pid)] : [pid];
  let rss = 0;
  let peak = 0;
  for (const p of pids) {
    try {
      const status = readFileSync(`/proc/${p}/status`, "utf8");
      rss += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
      peak += Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
    } catch { /* exited */ }
  }
  return { rss, peak, processes: pids.length };
}

export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const s = readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(s.slice(s.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
    } catch { /* gone */ }
  }
  const out: number[] = [];
  const stack = [pid];
  while (stack.length) for (const c of children.get(stack.pop()!) ?? []) out.push(c), stack.push(c);
  return out;
}

export function table(headers: string[], rows: (string | number)[][]): string {
  const cells = [headers, ...rows.map((r) => r.map((c) => typeof c === "number" ? fmt(c) : c))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => String(r[i]).length)));
  const line = (r: (string | number)[]) =>
    "| " + r.map((c, i) => String(c).padEnd(widths[i])).join(" | ") + " |";
  return [
    line(cells[0]),
    "|" + widths.map((w) => "-".repeat(w + 2)).join("|") + "|",
    ...cells.slice(1).map(line),
  ].join("\n");
}

export function fmt(n: number): string {
  if (Number.isInteger(n)) return String(n);
  return n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2);
}
