/**
 * `deno task bench`: hermit against the alternatives, side by side in one run, on this machine,
 * printed as markdown tables ready for the README (medians, p99, ratios; never pass/fail).
 * Sections:
 *  - paths: one host session per path (direct; `hermit serve`; relay → warm service; a minimal
 *    Bun relay → the same service, the relay's floor; mcp-remote → warm supergateway): ready,
 *    per-call latency, and every process each path runs with its memory;
 *  - startup: `--version`, spawn to the first `tools/list` (eager, lazy with a warm schema cache,
 *    command tools only), the binary's size;
 *  - sessions: N sessions calling at once (relays → one service; mcp-remote → one supergateway
 *    `--stateful`; N × `hermit serve`; N × the server alone);
 *  - sandbox: spawning with and without the sandbox, from `bench/sandbox.ts` when that file exists
 *    (it exports `sandboxSection(ctx: BenchContext): Promise<string>`, the markdown to print).
 * `--baseline BIN` measures a second hermit binary (e.g. the last release) in the same run, in
 * the paths and startup sections. The run's scratch directory is removed and every process it
 * started is stopped whether it succeeds or fails; a failure is one line on stderr and exit 1.
 *
 *   deno task bench [--calls N] [--spawns N] [--sessions N] [--only paths,startup,sessions,sandbox]
 *                   [--baseline BIN]
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { chains, FLOOR_RELAY_PATH, type PathRow, QUIET_MS } from "./chain.ts";
import {
  type BenchContext,
  coldPageCache,
  compileWithBun,
  everything,
  fmt,
  hermit,
  type ProcMem,
  root,
  table,
} from "./lib.ts";
import { sessions, type SessionsRow } from "./sessions.ts";
import { startup } from "./startup.ts";

const SECTIONS = ["paths", "startup", "sessions", "sandbox"];
const notes = path.join(root, "examples", "notes");
const sandboxModule = path.join(root, "bench", "sandbox.ts");

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
const baselineArg = value("--baseline");
const baseline = baselineArg && path.resolve(baselineArg);
if (!existsSync(hermit)) usage(`${hermit} is missing; build it first with 'deno task build'`);
if (baseline && !existsSync(baseline)) usage(`--baseline: ${baseline} does not exist`);

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

/** CPU µs per call, summed over the processes of a path that `which` picks. */
const cpuOf = (r: PathRow, which: (p: ProcMem) => boolean) =>
  Math.round(r.procs.filter(which).reduce((a, p) => a + (r.cpuPerCall.get(p.pid) ?? 0), 0));
/** What a path adds, shared parts included: every process but the upstream's. */
const cpuBesidesUpstream = (r: PathRow) => cpuOf(r, (p) => !p.role.startsWith("upstream"));
const signed = (n: number) => (n >= 0 ? "+" : "") + fmt(n);
const ratio = (x: number, reference: number) => `×${(x / reference).toFixed(2)}`;
const all = () => true;
const sum = (procs: ProcMem[], which: (p: ProcMem) => boolean = all, of: "rss" | "pss" = "rss") =>
  procs.filter(which).reduce((a, p) => a + p[of], 0);

function pathsSection(rows: PathRow[]): void {
  const direct = rows[0];
  console.log(`## One session per path: server-everything \`echo\`, ${CALLS} sequential calls\n`);
  console.log(
    '"ready": spawn to the first `tools/list` answer (median of ' + SPAWNS +
      "), with the relay's service and\n" +
      'supergateway already running. "per session": what one more session adds (hermit serve and its\n' +
      "watchdog; a relay; an mcp-remote), the upstream and shared backends not included. PSS counts\n" +
      "a page shared between processes (the runtime's code, mapped by every hermit) once across them.\n" +
      `"quiet": the same after every session has had no call for ${QUIET_MS / 1000} s (hermit gives\n` +
      "memory back after HERMIT_IDLE_RELEASE seconds without traffic).\n" +
      '"CPU µs per call": the CPU time (all threads, from /proc schedstat) every process of the path\n' +
      "but the upstream used while the path's calls ran, per call.\n",
  );
  console.log(table(
    [
      "path",
      "ready ms",
      "p50 µs",
      "p99 µs",
      "calls/s",
      "p50 vs direct",
      "added p50 µs",
      "processes",
      "RSS MiB",
      "per session RSS MiB",
      "per session PSS MiB",
      `per session RSS MiB, quiet ${QUIET_MS / 1000} s`,
      "CPU µs per call",
    ],
    rows.map((r) => [
      r.label,
      r.readyMs,
      r.stats.p50,
      r.stats.p99,
      r.stats.perSecond,
      r === direct ? "—" : ratio(r.stats.p50, direct.stats.p50),
      r === direct ? "—" : r.stats.p50 - direct.stats.p50,
      r.procs.length,
      sum(r.procs),
      r === direct ? "—" : sum(r.procs, r.perSession),
      r === direct ? "—" : sum(r.procs, r.perSession, "pss"),
      r === direct ? "—" : sum(r.quiet, r.perSession),
      r === direct ? "—" : cpuBesidesUpstream(r),
    ]),
  ));
  console.log(`\nEvery process of each path, after the calls and after ${QUIET_MS / 1000} s quiet:\n`);
  console.log(table(
    [
      "path",
      "process",
      "RSS MiB",
      "peak MiB",
      "PSS MiB",
      "quiet RSS MiB",
      "quiet PSS MiB",
      "CPU µs per call",
    ],
    rows.flatMap((r) =>
      r.procs.map((p) => {
        const q = r.quiet.find((x) => x.pid === p.pid);
        return [
          r.label,
          p.role,
          p.rss,
          p.peak,
          p.pss,
          q?.rss ?? "—",
          q?.pss ?? "—",
          Math.round(r.cpuPerCall.get(p.pid) ?? 0),
        ];
      })
    ),
  ));
  const find = (label: string) => rows.find((r) => r.label === label);
  const serve = find("client → `hermit serve` → server");
  const serveBase = find("client → `hermit serve` → server (baseline)");
  const relay = find("client → hermit relay → warm hermit service → server");
  const remote = find("client → mcp-remote → warm supergateway → server");
  const lines: string[] = [];
  if (serve && serveBase) {
    lines.push(
      `\`hermit serve\`'s own memory: ${fmt(sum(serve.procs, serve.perSession))} MiB vs ${
        fmt(sum(serveBase.procs, serveBase.perSession))
      } MiB for the baseline (${
        ratio(sum(serve.procs, serve.perSession), sum(serveBase.procs, serveBase.perSession))
      }); added p50 ${fmt(serve.stats.p50 - direct.stats.p50)} µs vs ${
        fmt(serveBase.stats.p50 - direct.stats.p50)
      } µs. After ${QUIET_MS / 1000} s quiet: ${fmt(sum(serve.quiet, serve.perSession))} MiB vs ${
        fmt(sum(serveBase.quiet, serveBase.perSession))
      } MiB (${ratio(sum(serve.quiet, serve.perSession), sum(serveBase.quiet, serveBase.perSession))}).`,
    );
  }
  if (relay && remote) {
    lines.push(
      `A relay: ${fmt(sum(relay.procs, relay.perSession))} MiB, ${
        ratio(sum(relay.procs, relay.perSession), sum(remote.procs, remote.perSession))
      } of an mcp-remote.`,
    );
  }
  if (relay && serve) {
    lines.push(
      `Per call, the relay chain adds ${fmt(relay.stats.p50 - direct.stats.p50)} µs at the median, ${
        ratio(relay.stats.p50 - direct.stats.p50, serve.stats.p50 - direct.stats.p50)
      } what \`hermit serve\` adds.`,
    );
  }
  const floor = find(FLOOR_RELAY_PATH);
  if (relay && floor && serve) {
    const [relayMiB, floorMiB] = [sum(relay.procs, relay.perSession), sum(floor.procs, floor.perSession)];
    lines.push(
      `A minimal Bun relay on the same service (bench/floor_relay.ts: lines in, fetch, lines out, ` +
        `nothing else): ${fmt(floorMiB)} MiB; its chain adds ${fmt(floor.stats.p50 - direct.stats.p50)} µs, ${
          ratio(floor.stats.p50 - direct.stats.p50, serve.stats.p50 - direct.stats.p50)
        } what \`hermit serve\` adds. hermit's relay against it: ${signed(relayMiB - floorMiB)} MiB, ${
          signed(relay.stats.p50 - floor.stats.p50)
        } µs per call.`,
    );
  }
  if (serve && relay) {
    const roleCpu = (r: PathRow, role: string) => cpuOf(r, (p) => p.role === role);
    lines.push(
      `CPU per call besides the upstream: \`hermit serve\` ${cpuBesidesUpstream(serve)} µs; the relay chain ${
        cpuBesidesUpstream(relay)
      } µs (relay ${roleCpu(relay, "hermit relay")}, service ${roleCpu(relay, "hermit service")})${
        floor ? `; the floor relay's chain ${cpuBesidesUpstream(floor)} µs` : ""
      }${remote ? `; mcp-remote → supergateway ${cpuBesidesUpstream(remote)} µs` : ""}.`,
    );
  }
  if (lines.length) console.log("\n" + lines.join("\n"));
}

function startupSection(r: Awaited<ReturnType<typeof startup>>): void {
  console.log(`\n## Start-up (median of ${SPAWNS}; \`--version\` of at least 20)\n`);
  console.log(table(
    ["what", "median ms", "min", "max", "peak RSS MiB"],
    r.rows.map((x) => [x.label, x.ms, x.min, x.max, x.peakMiB ?? "—"]),
  ));
  console.log(
    "\nBinary size: " +
      r.sizes.map((s) => `${s.label} ${s.bytes} bytes (${fmt(s.bytes / 1048576)} MiB)`).join("; ") +
      ".",
  );
}

function sessionsSection(rows: SessionsRow[]): void {
  const peer = rows[1];
  console.log(`\n## ${SESSIONS} sessions calling at once (${CALLS_EACH} calls each)\n`);
  console.log(
    '"all connected": from nothing running to every session initialized, the shared backend\'s\n' +
      'start-up included. "vs supergateway": against the second row, the peers\' shared gateway.\n',
  );
  console.log(table(
    [
      "setup",
      "connected",
      "processes",
      "RSS MiB",
      "PSS MiB",
      "calls/s",
      "calls/s vs supergateway",
      "p50 ms",
      "p99 ms",
      "p99/p50",
      "all connected s",
    ],
    rows.map((r) => [
      r.label,
      `${r.connected}/${SESSIONS}`,
      r.procs.length,
      sum(r.procs),
      sum(r.procs, all, "pss"),
      r.perSecond,
      r === peer ? "—" : ratio(r.perSecond, peer.perSecond),
      r.p50 / 1000,
      r.p99 / 1000,
      (r.p99 / r.p50).toFixed(1),
      r.startMs / 1000,
    ]),
  ));
  console.log("\nMemory by process kind:\n");
  console.log(table(
    ["setup", "process", "count", "RSS MiB (all)", "RSS MiB (median one)", "PSS MiB (all)"],
    rows.flatMap((r) => {
      const kinds = [...new Set(r.procs.map((p) => p.role))];
      return kinds.map((k) => {
        const of = r.procs.filter((p) => p.role === k);
        const rss = of.map((p) => p.rss).sort((a, b) => a - b);
        return [r.label, k, of.length, sum(of), rss[Math.floor(rss.length / 2)], sum(of, all, "pss")];
      });
    }),
  ));
}

let failed = false;
try {
  const sessionAdapter = adapter("session", "");
  const lazyAdapter = adapter("lazy", "    lazy: true\n");
  const standaloneServe =
    "serve:\n  lifecycle: standalone\n  host_launch: false\n  instructions: SERVICE.md\n";
  const standaloneAdapter = adapter("standalone", standaloneServe);
  const baselineStandaloneAdapter = baseline ? adapter("standalone-baseline", standaloneServe) : undefined;
  const ctx: BenchContext = { hermit, root, work, everything, spawns: SPAWNS, adapter };
  console.log(`# hermit benchmark\n`);
  console.log(
    `${new Date().toISOString()} · ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"} · load ${
      os.loadavg().map((l) => l.toFixed(2)).join(" ")
    }${baseline ? ` · baseline: ${baseline}` : ""}\n`,
  );
  const common = { hermit, baseline, everything, sessionAdapter, root, work, spawns: SPAWNS };
  const binaries = [hermit, ...(baseline ? [baseline] : [])];
  console.log(`${coldPageCache(binaries)}.\n`);
  if (only.includes("paths")) {
    // the floor under the relay row, built the way hermit is
    const floorRelay = compileWithBun(
      path.join(root, "bench", "floor_relay.ts"),
      path.join(work, "floor-relay"),
      [
        "--minify",
        "--bytecode",
      ],
    );
    if (!floorRelay) console.error("bench: the floor relay did not build; its row is left out");
    coldPageCache(floorRelay ? [...binaries, floorRelay] : binaries);
    pathsSection(
      await chains({ ...common, standaloneAdapter, baselineStandaloneAdapter, floorRelay, calls: CALLS }),
    );
  }
  if (only.includes("startup")) {
    coldPageCache(binaries);
    startupSection(await startup({ ...common, lazyAdapter, notes }));
  }
  if (only.includes("sessions")) {
    coldPageCache(binaries);
    sessionsSection(
      await sessions({ ...common, standaloneAdapter, n: SESSIONS, callsEach: CALLS_EACH }),
    );
  }
  // The sandbox issue's measurement lives in its own file; this is its place in the run.
  if (only.includes("sandbox") && existsSync(sandboxModule)) {
    const mod = await import(sandboxModule) as { sandboxSection(ctx: BenchContext): Promise<string> };
    console.log("\n" + await mod.sandboxSection(ctx));
  }
} catch (err) {
  console.error(`bench: error: ${err instanceof Error ? err.message : String(err)}`);
  failed = true;
} finally {
  rmSync(work, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
