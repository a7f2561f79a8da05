/**
 * `deno task bench`: hermit against direct stdio, side by side in one run, on this machine.
 * Sections: per-call latency through `hermit serve` vs the same upstream directly; spawn to first
 * `tools/list`; memory. Prints markdown tables (medians, p99, ratios) for the README.
 *
 *   deno task bench [--calls N] [--spawns N]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { callLatency, median, memoryOf, spawnToList, stdioClient, table } from "./lib.ts";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const hermit = path.join(root, "dist", "hermit");
const everything = path.join(
  root,
  "node_modules",
  "@modelcontextprotocol",
  "server-everything",
  "dist",
  "index.js",
);
const node = "node";

const argv = process.argv.slice(2);
const opt = (name: string, dflt: number) => {
  const i = argv.indexOf(name);
  return i >= 0 ? Number(argv[i + 1]) : dflt;
};
const CALLS = opt("--calls", 1000);
const SPAWNS = opt("--spawns", 10);

const work = mkdtempSync(path.join(os.tmpdir(), "hermit-bench-"));
const adapter = path.join(work, "everything");
mkdirSync(adapter);
writeFileSync(
  path.join(adapter, "hermit.yaml"),
  `name: bench
exports: { tools: [echo, get-sum] }
mcp_servers:
  everything:
    command: ${node}
    args: [${JSON.stringify(everything)}]
    tools: { include: [echo, get-sum] }
`,
);
const notes = path.join(root, "examples", "notes");

console.log(`# hermit benchmark\n`);
console.log(
  `${new Date().toISOString()} · ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"} · load ${
    os.loadavg().map((l) => l.toFixed(2)).join(" ")
  } · ${CALLS} calls, ${SPAWNS} spawns\n`,
);

// 1. per-call latency: the same tool, directly and through hermit
{
  const direct = await stdioClient(node, [everything]);
  const viaHermit = await stdioClient(hermit, ["serve", adapter]);
  const args = { message: "hello from the benchmark" };
  // interleave runs so load noise hits both alike
  const d1 = await callLatency(direct.client, "echo", args, CALLS / 2);
  const h1 = await callLatency(viaHermit.client, "echo", args, CALLS / 2);
  const d2 = await callLatency(direct.client, "echo", args, CALLS / 2, 0);
  const h2 = await callLatency(viaHermit.client, "echo", args, CALLS / 2, 0);
  const d = {
    p50: (d1.p50 + d2.p50) / 2,
    p99: Math.max(d1.p99, d2.p99),
    perSecond: (d1.perSecond + d2.perSecond) / 2,
  };
  const h = {
    p50: (h1.p50 + h2.p50) / 2,
    p99: Math.max(h1.p99, h2.p99),
    perSecond: (h1.perSecond + h2.perSecond) / 2,
  };
  const hermitMem = memoryOf(viaHermit.pid, false);
  const upstreamMem = memoryOf(viaHermit.pid, true);
  const directMem = memoryOf(direct.pid, true);

  const notesClient = await stdioClient(hermit, ["serve", notes], {
    NOTES_FILE: path.join(work, "notes.jsonl"),
  });
  const cmd = await callLatency(notesClient.client, "search_notes", { query: "x" }, Math.min(200, CALLS), 5);

  console.log("## Per call (server-everything `echo`, sequential)\n");
  console.log(table(["path", "p50 µs", "p99 µs", "calls/s", "overhead p50"], [
    ["client → server (direct stdio)", d.p50, d.p99, d.perSecond, "—"],
    [
      "client → hermit serve → server",
      h.p50,
      h.p99,
      h.perSecond,
      `+${((h.p50 - d.p50) / 1000).toFixed(2)} ms (×${(h.p50 / d.p50).toFixed(2)})`,
    ],
    ["client → hermit serve → command tool (python3)", cmd.p50, cmd.p99, cmd.perSecond, "process per call"],
  ]));
  console.log("\n## Memory after the run (RSS, MiB)\n");
  console.log(table(["process", "RSS", "peak"], [
    ["server-everything, direct", directMem.rss, directMem.peak],
    ["hermit serve itself", hermitMem.rss, hermitMem.peak],
    ["hermit serve + its upstream", upstreamMem.rss, upstreamMem.peak],
  ]));
  await Promise.all([direct.close(), viaHermit.close(), notesClient.close()]);
}

// 2. spawn to first tools/list
{
  const rows: (string | number)[][] = [];
  const measure = async (label: string, cmd: string, args: string[], env: Record<string, string> = {}) => {
    const runs: number[] = [];
    for (let i = 0; i < SPAWNS; i++) runs.push(await spawnToList(cmd, args, env, work));
    return { label, ms: median(runs), min: Math.min(...runs), max: Math.max(...runs) };
  };
  const direct = await measure("server-everything directly (node)", node, [everything]);
  const viaHermit = await measure("hermit serve → server-everything", hermit, ["serve", adapter]);
  const cmdOnly = await measure("hermit serve, command tools only (examples/notes)", hermit, [
    "serve",
    notes,
  ]);
  for (const r of [direct, viaHermit, cmdOnly]) {
    rows.push([r.label, r.ms, r.min, r.max, r === direct ? "—" : `×${(r.ms / direct.ms).toFixed(2)}`]);
  }
  console.log(`\n## Spawn to first tools/list (median of ${SPAWNS})\n`);
  console.log(table(["server", "median ms", "min", "max", "vs direct"], rows));
}

rmSync(work, { recursive: true, force: true });
