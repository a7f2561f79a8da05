/**
 * `deno task bench`: hermit against the alternatives, side by side in one run, on this machine.
 * Sections: per-call latency through every chain (direct, hermit serve, hermit relay → service,
 * mcp-remote → supergateway); spawn to first `tools/list` (direct, eager, lazy with a warm schema
 * cache, command tools only); 32 sessions on one service vs 32 separate servers. Prints markdown
 * tables (medians, p99, ratios) for the README.
 *
 *   deno task bench [--calls N] [--spawns N] [--sessions N] [--only chain,spawn,sessions]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { chains } from "./chain.ts";
import { median, spawnToList, table } from "./lib.ts";
import { sessions } from "./sessions.ts";

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

const argv = process.argv.slice(2);
const opt = (name: string, dflt: number) => {
  const i = argv.indexOf(name);
  return i >= 0 ? Number(argv[i + 1]) : dflt;
};
const only = argv.includes("--only")
  ? argv[argv.indexOf("--only") + 1].split(",")
  : ["chain", "spawn", "sessions"];
const CALLS = opt("--calls", 1000);
const SPAWNS = opt("--spawns", 10);
const SESSIONS = opt("--sessions", 32);

const work = mkdtempSync(path.join(os.tmpdir(), "hermit-bench-"));
const home = path.join(work, "state");
process.env.HERMIT_HOME = home; // hermit's schema cache for this run only

function adapter(name: string, extra: string): string {
  const dir = path.join(work, name);
  mkdirSync(dir);
  writeFileSync(
    path.join(dir, "hermit.yaml"),
    `name: ${name}\nexports: { tools: [echo, get-sum] }\nmcp_servers:\n  everything:\n    command: node\n    args: [${
      JSON.stringify(everything)
    }]\n    tools: { include: [echo, get-sum] }\n${extra}`,
  );
  writeFileSync(path.join(dir, "SERVICE.md"), "hermit serve . --standalone\n");
  return dir;
}
const sessionAdapter = adapter("session", "");
const lazyAdapter = adapter("lazy", "    lazy: true\n");
const standaloneAdapter = adapter(
  "standalone",
  "serve:\n  lifecycle: standalone\n  host_launch: false\n  instructions: SERVICE.md\n",
);
const notes = path.join(root, "examples", "notes");

console.log(`# hermit benchmark\n`);
console.log(
  `${new Date().toISOString()} · ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"} · load ${
    os.loadavg().map((l) => l.toFixed(2)).join(" ")
  }\n`,
);

if (only.includes("chain")) {
  const rows = await chains({ hermit, everything, sessionAdapter, standaloneAdapter, root, calls: CALLS });
  const direct = rows[0].stats.p50;
  console.log(`## Per call: server-everything \`echo\`, ${CALLS} sequential calls\n`);
  console.log(
    table(
      ["chain", "p50 µs", "p99 µs", "calls/s", "vs direct (p50)", "processes", "RSS MiB"],
      rows.map((r) => [
        r.label,
        r.stats.p50,
        r.stats.p99,
        r.stats.perSecond,
        r === rows[0] ? "—" : `×${(r.stats.p50 / direct).toFixed(2)}`,
        r.processes,
        r.rssMiB,
      ]),
    ),
  );
}

if (only.includes("spawn")) {
  const measure = async (label: string, cmd: string, args: string[]) => {
    const runs: number[] = [];
    for (let i = 0; i < SPAWNS; i++) runs.push(await spawnToList(cmd, args, {}, work));
    return { label, ms: median(runs), min: Math.min(...runs), max: Math.max(...runs) };
  };
  await spawnToList(hermit, ["serve", lazyAdapter], {}, work); // warms the schema cache
  const rows = [
    await measure("the server alone (node)", "node", [everything]),
    await measure("hermit serve → server (eager)", hermit, ["serve", sessionAdapter]),
    await measure("hermit serve, lazy: true, warm schema cache", hermit, ["serve", lazyAdapter]),
    await measure("hermit serve, command tools only (examples/notes)", hermit, ["serve", notes]),
  ];
  console.log(`\n## Spawn to first tools/list (median of ${SPAWNS})\n`);
  console.log(table(
    ["server", "median ms", "min", "max", "vs the server alone"],
    rows.map((r) => [
      r.label,
      r.ms,
      r.min,
      r.max,
      r === rows[0] ? "—" : `×${(r.ms / rows[0].ms).toFixed(2)}`,
    ]),
  ));
}

if (only.includes("sessions")) {
  const rows = await sessions({
    hermit,
    everything,
    sessionAdapter,
    standaloneAdapter,
    n: SESSIONS,
    callsEach: 50,
  });
  console.log(`\n## ${SESSIONS} sessions calling at once (50 calls each)\n`);
  console.log(
    table(
      ["setup", "processes", "RSS MiB", "calls/s", "p50 µs", "p99 µs", "all connected in ms"],
      rows.map((r) => [
        r.label,
        r.processes,
        r.rssMiB,
        r.perSecond,
        r.p50,
        r.p99,
        r.startMs,
      ]),
    ),
  );
}

rmSync(work, { recursive: true, force: true });
process.exit(0);
