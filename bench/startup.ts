/**
 * Bench section: start-up. `hermit --version` (spawn to exit, and its peak memory through GNU
 * time where installed), spawn to the first `tools/list` answer for the server alone, `hermit
 * serve` starting it (eager), a `lazy: true` adapter with a warm schema cache (nothing started),
 * and a command-tools-only adapter; the runtime's floor (a compiled hello world); and the binary's
 * size. A `baseline` binary gets the same hermit rows in the same run.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { compileWithBun, median, spawnToList } from "./lib.ts";

export interface StartRow {
  label: string;
  /** Milliseconds: median, min, max. */
  ms: number;
  min: number;
  max: number;
  /** Peak RSS in MiB, where it could be measured. */
  peakMiB?: number;
}

const GNU_TIME = "/usr/bin/time";

/** Spawn to exit, in milliseconds. */
function runOnce(cmd: string, args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(cmd, args, { stdio: "ignore" });
    child.once("error", reject);
    child.once("exit", () => resolve(performance.now() - t0));
  });
}

/** Peak RSS of one run in MiB, from GNU time; undefined without it. */
function peakOf(cmd: string, args: string[]): number | undefined {
  if (!existsSync(GNU_TIME)) return undefined;
  const r = spawnSync(GNU_TIME, ["-f", "%M", cmd, ...args], { encoding: "utf8" });
  const kib = Number(r.stderr.trim().split("\n").pop());
  return Number.isFinite(kib) && kib > 0 ? kib / 1024 : undefined;
}

/** The runtime's own floor: a compiled hello world (built into `work`); undefined if bun fails. */
function helloWorld(work: string): string | undefined {
  const src = path.join(work, "hello.ts");
  writeFileSync(src, 'console.log("hello");\n');
  return compileWithBun(src, path.join(work, "hello"));
}

const stats = (label: string, runs: number[], peakMiB?: number): StartRow => ({
  label,
  ms: median(runs),
  min: Math.min(...runs),
  max: Math.max(...runs),
  peakMiB,
});

export async function startup(opts: {
  hermit: string;
  baseline?: string;
  everything: string;
  sessionAdapter: string;
  lazyAdapter: string;
  notes: string;
  work: string;
  spawns: number;
}): Promise<{ rows: StartRow[]; sizes: { label: string; bytes: number }[] }> {
  const toList = async (label: string, cmd: string, args: string[]) => {
    const runs: number[] = [];
    for (let i = 0; i < opts.spawns; i++) runs.push(await spawnToList(cmd, args, {}, opts.work));
    return stats(label, runs);
  };
  const rows: StartRow[] = [
    await toList("the server alone (node), to tools/list", "node", [opts.everything]),
  ];
  const hermits = [
    { bin: opts.hermit, tag: "" },
    ...opts.baseline ? [{ bin: opts.baseline, tag: " (baseline)" }] : [],
  ];
  for (const { bin, tag } of hermits) {
    const version: number[] = [];
    for (let i = 0; i < Math.max(opts.spawns, 20); i++) version.push(await runOnce(bin, ["--version"]));
    rows.push(stats(`\`hermit --version\`${tag}`, version, peakOf(bin, ["--version"])));
    await spawnToList(bin, ["serve", opts.lazyAdapter], {}, opts.work); // warms the schema cache
    rows.push(
      await toList(`\`hermit serve\` → server (eager), to tools/list${tag}`, bin, [
        "serve",
        opts.sessionAdapter,
      ]),
    );
    rows.push(
      await toList(`\`hermit serve\`, \`lazy: true\`, warm schema cache, to tools/list${tag}`, bin, [
        "serve",
        opts.lazyAdapter,
      ]),
    );
    rows.push(
      await toList(`\`hermit serve\`, command tools only (examples/notes)${tag}`, bin, ["serve", opts.notes]),
    );
  }
  const floor = helloWorld(opts.work);
  if (floor) {
    const runs: number[] = [];
    for (let i = 0; i < Math.max(opts.spawns, 20); i++) runs.push(await runOnce(floor, []));
    rows.push(stats("the floor: a `bun build --compile` hello world", runs, peakOf(floor, [])));
  }
  const sizes = hermits.map(({ bin, tag }) => ({ label: `dist/hermit${tag}`, bytes: statSync(bin).size }));
  return { rows, sizes };
}
