/**
 * Measurement helpers for `deno task bench`: sequential call latency through an MCP client,
 * spawn-to-first-`tools/list` with raw JSON-RPC (no client library in the way), and memory from
 * /proc, per process with its role in the path. Everything is measured side by side in one run;
 * results are medians and ratios.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";

/** The repository, the binary the benchmarks measure, and server-everything's entry point. */
export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const hermit = path.join(root, "dist", "hermit");
export const everything = path.join(
  root,
  "node_modules",
  "@modelcontextprotocol",
  "server-everything",
  "dist",
  "index.js",
);

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Drop the page cache of `files` (`sync`, then GNU dd's `iflag=nocache count=0`: posix_fadvise
 * DONTNEED), so every binary starts each section from the same state. RSS counts the file pages a
 * process maps, and how many the kernel maps at each fault depends on what of the file is cached
 * (fault-around maps cached neighbours too): measured here, one relay took 35–38 MiB with its
 * binary just built or copied and 32 MiB after the binary's pages were dropped, and a byte-identical
 * copy of a binary 2.6 MiB more than the original, so two binaries compared as they came measured
 * their page cache's history. Pages a running process maps stay cached. Says what it did.
 */
export function coldPageCache(files: string[]): string {
  spawnSync("sync");
  const dropped = files.filter((f) =>
    spawnSync("dd", [`if=${f}`, "iflag=nocache", "count=0", "status=none"]).status === 0
  );
  return dropped.length === files.length
    ? "page cache: the binaries' pages dropped before each section"
    : "page cache: as it was (dd iflag=nocache did not work here), so RSS of file pages varies from run to run";
}

/**
 * `src` compiled with `bun build --compile` (plus `flags`) into `out`, as the bench's floors are
 * built; undefined when bun fails.
 */
export function compileWithBun(src: string, out: string, flags: string[] = []): string | undefined {
  const r = spawnSync(path.join(root, "node_modules", ".bin", "bun"), [
    "build",
    "--compile",
    ...flags,
    src,
    "--outfile",
    out,
  ], { stdio: "ignore" });
  return r.status === 0 && existsSync(out) ? out : undefined;
}

/** What a bench section gets (a section in its own file, e.g. `bench/sandbox.ts`, too). */
export interface BenchContext {
  /** dist/hermit. */
  hermit: string;
  /** The repository. */
  root: string;
  /** The run's scratch directory (removed after the run); HERMIT_HOME is under it. */
  work: string;
  /** server-everything's entry point (run with node). */
  everything: string;
  /** How many spawns a start-up measurement takes the median of. */
  spawns: number;
  /** A new adapter directory in `work` serving server-everything's echo and get-sum, plus `extra` YAML. */
  adapter(name: string, extra: string): string;
}

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

/** Stats of call times (microseconds) that took `ms` of wall time in all. */
export function statsOf(times: number[], ms: number): CallStats {
  return { p50: percentile(times, 50), p99: percentile(times, 99), perSecond: times.length / (ms / 1000) };
}

/** `n` sequential calls of one tool, measured: each call's microseconds and the wall time. */
export async function callSamples(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  n: number,
): Promise<{ times: number[]; ms: number }> {
  const times: number[] = [];
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const s = performance.now();
    const r = await client.callTool({ name, arguments: args });
    times.push((performance.now() - s) * 1000);
    if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.content)}`);
  }
  return { times, ms: performance.now() - t0 };
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
  const { times, ms } = await callSamples(client, name, args, n);
  return statsOf(times, ms);
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

/** One process of a path, as /proc shows it after the calls: what it is and its memory in MiB. */
export interface ProcMem {
  pid: number;
  /** What it is in the path (`hermit serve`, `watchdog (sh)`, `upstream (node)`, …). */
  role: string;
  rss: number;
  /** Peak resident set (VmHWM). */
  peak: number;
  /**
   * Proportional set size: resident pages, each shared one divided among the processes that map
   * it (hermit's binary, mapped by every hermit process, counts once across them).
   */
  pss: number;
}

/**
 * Every live process of `roots` (with their descendants), each with its role (from `roles` where
 * the caller knows better than the command line, e.g. a relay) and memory.
 */
export function processesOf(
  roots: number[],
  roles: ReadonlyMap<number, string> = new Map(),
  withDescendants = true,
): ProcMem[] {
  const pids = withDescendants ? treeOf(roots) : [...new Set(roots)];
  return pids.flatMap((pid) => {
    try {
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      if (/State:\s+Z/.test(status)) return [];
      const kib = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
      let pss = 0;
      try {
        pss = Number(/Pss:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"))?.[1] ?? 0) / 1024;
      } catch { /* a kernel without smaps_rollup */ }
      const role = roles.get(pid) ?? roleOf(pid);
      return [{ pid, role, rss: kib("VmRSS") / 1024, peak: kib("VmHWM") / 1024, pss }];
    } catch {
      return []; // exited
    }
  });
}

/** `roots` and every descendant of theirs, each once. */
export function treeOf(roots: number[]): number[] {
  return [...new Set(roots.flatMap((p) => [p, ...descendants(p)]))];
}

/**
 * CPU time a process has used so far, all its threads, in µs (from /proc/PID/task/*\/schedstat,
 * which counts in ns, not in clock ticks); 0 once it is gone.
 */
export function cpuMicros(pid: number): number {
  let ns = 0;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
      } catch { /* the thread ended */ }
    }
  } catch {
    return 0;
  }
  return ns / 1000;
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

/** What a process is, from its command line. */
export function roleOf(pid: number): string {
  let argv: string[];
  try {
    argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
  } catch {
    return "?";
  }
  const line = argv.join(" ");
  const exe = argv[0]?.split("/").pop() ?? "?";
  if (line.includes("watchdog --ppid") && line.includes("--supervise")) {
    return argv[1] === "watchdog" ? "watchdog (hermit)" : `watchdog (${exe})`;
  }
  if (argv[1] === "serve" && !["node", "sh", "bash", "dash", "deno", "bun"].includes(exe)) {
    return argv.includes("--standalone") ? "hermit service" : "hermit serve";
  }
  if (line.includes("mcp-remote")) return "mcp-remote (node)";
  if (line.includes("supergateway")) return "supergateway (node)";
  if (line.includes("server-everything")) {
    return exe === "node" ? "upstream: server-everything (node)" : `upstream's wrapper (${exe})`;
  }
  return exe;
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
