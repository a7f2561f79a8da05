/**
 * `deno task bench`: hermit against the alternatives, side by side in one run, on this machine.
 * Sections: per-call latency through every chain (direct, hermit serve, hermit relay → service,
 * mcp-remote → supergateway); spawn to first `tools/list` (direct, eager, lazy with a warm schema
 * cache, command tools only); N sessions on one service vs N separate servers; the sandbox's
 * cost (bench/sandbox.ts). Prints markdown tables (medians, p99, ratios) for the README. The run's scratch directory is removed and every
 * process it started is stopped whether it succeeds or fails; a failure is one line on stderr
 * and exit 1.
 *
 *   deno task bench [--calls N] [--spawns N] [--sessions N] [--only chain,spawn,sessions,sandbox]
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { chains } from "./chain.ts";
import { median, spawnToList, table } from "./lib.ts";
import { sandboxSection } from "./sandbox.ts";
import { sessions } from "./sessions.ts";

const SECTIONS = ["chain", "spawn", "sessions", "sandbox"];
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const hermit = path.join(root, "dist", "hermit");
const everything = path.join(
  root,
  "node_modules",
  "@modelcontextprotocol",
  "server-everything",
  "dist",
  "index.js",
);
const notes = path.join(root, "examples", "notes");

function usage(message: string): never {
  console.error(`bench: error: ${message}`);
  process.exit(2);
}

const argv = process.argv.slice(2);
const value = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  if (i < 0) return undefined;
  if (argv[i + 1] === undefined) usage(`${name} needs a value`);
  return argv[i + 1];
};
const count = (name: string, dflt: number): number => {
  const v = value(name);
  if (v === undefined) return dflt;
  if (!/^[1-9]\d*$/.test(v)) usage(`${name} must be a whole number above 0, not '${v}'`);
  return Number(v);
};
const only = value("--only")?.split(",") ?? SECTIONS;
const unknown = only.find((s) => !SECTIONS.includes(s));
if (unknown !== undefined) usage(`--only: unknown section '${unknown}'; use ${SECTIONS.join(",")}`);
const CALLS = count("--calls", 1000);
const SPAWNS = count("--spawns", 10);
const SESSIONS = count("--sessions", 32);
const CALLS_EACH = 50;
if (!existsSync(hermit)) usage(`${hermit} is missing; build it first with 'deno task build'`);

const work = mkdtempSync(path.join(os.tmpdir(), "hermit-bench-"));
process.env.HERMIT_HOME = path.join(work, "state"); // hermit's schema cache for this run only

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

const ratio = (x: number, reference: number) => `×${(x / reference).toFixed(2)}`;

async function chainSection(sessionAdapter: string, standaloneAdapter: string) {
  const rows = await chains({
    hermit,
    everything,
    sessionAdapter,
    standaloneAdapter,
    root,
    work,
    calls: CALLS,
  });
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
        r === rows[0] ? "—" : ratio(r.stats.p50, direct),
        r.processes,
        r.rssMiB,
      ]),
    ),
  );
}

async function spawnSection(sessionAdapter: string, lazyAdapter: string) {
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
  console.log(
    "Peers (mcp-remote, supergateway) appear only in the per-call table: each is one half of a\n" +
      "relay chain, not a server a host spawns on its own.\n",
  );
  console.log(table(
    ["server", "median ms", "min", "max", "vs the server alone"],
    rows.map((r) => [r.label, r.ms, r.min, r.max, r === rows[0] ? "—" : ratio(r.ms, rows[0].ms)]),
  ));
}

async function sessionsSection(sessionAdapter: string, standaloneAdapter: string) {
  const rows = await sessions({
    hermit,
    everything,
    sessionAdapter,
    standaloneAdapter,
    n: SESSIONS,
    callsEach: CALLS_EACH,
  });
  const alone = rows[rows.length - 1];
  console.log(`\n## ${SESSIONS} sessions calling at once (${CALLS_EACH} calls each)\n`);
  console.log(
    '"vs alone": against the last row, the server alone. "all connected": from nothing running to\n' +
      "every session initialized, the shared service's start-up included. Peers (mcp-remote,\n" +
      "supergateway) appear only in the per-call table.\n",
  );
  console.log(
    table(
      [
        "setup",
        "processes",
        "RSS MiB",
        "RSS vs alone",
        "calls/s",
        "calls/s vs alone",
        "p50 µs",
        "p99 µs",
        "all connected in ms",
      ],
      rows.map((r) => [
        r.label,
        r.processes,
        r.rssMiB,
        r === alone ? "—" : ratio(r.rssMiB, alone.rssMiB),
        r.perSecond,
        r === alone ? "—" : ratio(r.perSecond, alone.perSecond),
        r.p50,
        r.p99,
        r.startMs,
      ]),
    ),
  );
}

let failed = false;
try {
  const sessionAdapter = adapter("session", "");
  const lazyAdapter = adapter("lazy", "    lazy: true\n");
  const standaloneAdapter = adapter(
    "standalone",
    "serve:\n  lifecycle: standalone\n  host_launch: false\n  instructions: SERVICE.md\n",
  );
  console.log(`# hermit benchmark\n`);
  console.log(
    `${new Date().toISOString()} · ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"} · load ${
      os.loadavg().map((l) => l.toFixed(2)).join(" ")
    }\n`,
  );
  if (only.includes("chain")) await chainSection(sessionAdapter, standaloneAdapter);
  if (only.includes("spawn")) await spawnSection(sessionAdapter, lazyAdapter);
  if (only.includes("sessions")) await sessionsSection(sessionAdapter, standaloneAdapter);
  if (only.includes("sandbox")) {
    await sandboxSection({ hermit, everything, work, spawns: SPAWNS, calls: CALLS });
  }
} catch (err) {
  console.error(`bench: error: ${err instanceof Error ? err.message : String(err)}`);
  failed = true;
} finally {
  rmSync(work, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
