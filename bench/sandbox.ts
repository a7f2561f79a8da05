/**
 * The sandbox's cost, for `deno task bench` (section `sandbox`): spawn to the first `tools/list`
 * of one server through `hermit serve`, confined (an untrusted server: Landlock plus a user and
 * network namespace; a full-trust one: Landlock alone) and with `sandbox: off`, alternated so
 * load drifts hit both alike; the launcher alone (`hermit __sandbox … /bin/true` against
 * `/bin/true`); and calls through a running confined server against an unconfined one (the
 * launcher is gone after `execve`, so a call should cost the same).
 */
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { contextFrom } from "../src/manifest/interpolate.ts";
import { NO_SANDBOX_SETTINGS } from "../src/manifest/sandbox.ts";
import { homeDir, stateDir } from "../src/platform/paths.ts";
import { resolvePolicy } from "../src/sandbox/policy.ts";
import { type BenchContext, callLatency, fmt, percentile, spawnToList, stdioClient, table } from "./lib.ts";

const median = (xs: number[]) => percentile(xs, 50);
/** Calls through a confined and an unconfined server, for the per-call comparison. */
const CALLS = 300;

function adapter(work: string, name: string, server: string, extra = ""): string {
  const dir = path.join(work, name);
  mkdirSync(dir);
  writeFileSync(
    path.join(dir, "hermit.yaml"),
    `name: ${name}\nexports: { tools: [echo] }\nmcp_servers:\n  everything:\n    command: node\n    args: [${
      JSON.stringify(server)
    }]\n    tools: { include: [echo] }\n${extra}`,
  );
  return dir;
}

/** Milliseconds from spawn to exit of `cmd args` (stdio ignored). */
function spawnToExit(
  cmd: string,
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(cmd, args, {
      stdio: ["ignore", "ignore", "ignore", "ignore"],
      env: { ...process.env, ...env },
    });
    child.once("error", reject);
    child.once(
      "exit",
      (code) => code === 0 ? resolve(performance.now() - t0) : reject(new Error(`${cmd} exited ${code}`)),
    );
  });
}

/** The section's markdown (`bench/run.ts` prints it). */
export async function sandboxSection(o: BenchContext): Promise<string> {
  const untrusted = adapter(
    o.work,
    "sbx-untrusted",
    o.everything,
    "    trust: untrusted\n    read_only_tools: [echo]\n",
  );
  const full = adapter(o.work, "sbx-full", o.everything);
  const off = adapter(o.work, "sbx-off", o.everything, "    sandbox: off\n");
  const serve = (dir: string) => spawnToList(o.hermit, ["serve", dir], {}, o.work);
  for (const dir of [off, full, untrusted]) await serve(dir); // warm the file cache
  const runs = { off: [] as number[], full: [] as number[], untrusted: [] as number[] };
  for (let i = 0; i < o.spawns; i++) {
    runs.off.push(await serve(off));
    runs.full.push(await serve(full));
    runs.untrusted.push(await serve(untrusted));
  }

  // the launcher alone, with a real default policy (an untrusted server's), in front of a
  // program that does nothing
  const home = homeDir();
  const policy = resolvePolicy(
    { label: "bench", kind: "server", trust: "untrusted", settings: NO_SANDBOX_SETTINGS },
    {
      platform: process.platform,
      home,
      env: process.env,
      interpolation: contextFrom(process.env, o.work),
      adapterDir: untrusted,
      stateDir: stateDir(process.platform, process.env, home),
      tmpDir: o.work,
      servedAdapters: [untrusted],
      requireAll: false,
    },
  );
  const plan = JSON.stringify({
    label: "bench",
    fs: policy.fs,
    network: policy.network,
    require: false,
    launcherEnv: [],
  });
  const launcherEnv = {
    BUN_JSC_useConcurrentGC: "0",
    BUN_JSC_useConcurrentJIT: "0",
    BUN_JSC_useWarmUpMarkedBlocks: "0",
  };
  const bare: number[] = [];
  const launched: number[] = [];
  for (let i = 0; i < o.spawns * 2; i++) {
    bare.push(await spawnToExit("/bin/true", []));
    launched.push(await spawnToExit(o.hermit, ["__sandbox", plan, "/bin/true"], launcherEnv));
  }

  const calls = CALLS;
  const perCall = async (dir: string) => {
    const c = await stdioClient(o.hermit, ["serve", dir]);
    try {
      return await callLatency(c.client, "echo", { message: "hi" }, calls);
    } finally {
      await c.close();
    }
  };
  const callsOff = await perCall(off);
  const callsOn = await perCall(untrusted);

  const m = { off: median(runs.off), full: median(runs.full), untrusted: median(runs.untrusted) };
  const plus = (x: number, ref: number) => `${x - ref >= 0 ? "+" : ""}${(x - ref).toFixed(0)} ms`;
  const out: string[] = [];
  out.push(`## The sandbox's cost (median of ${o.spawns} spawns, alternated)\n`);
  out.push(table(
    ["server-everything through `hermit serve`", "spawn → tools/list ms", "min", "max", "vs sandbox: off"],
    [
      ["sandbox: off", m.off, Math.min(...runs.off), Math.max(...runs.off), "—"],
      [
        "confined, trust full (Landlock)",
        m.full,
        Math.min(...runs.full),
        Math.max(...runs.full),
        plus(m.full, m.off),
      ],
      [
        "confined, untrusted (Landlock + user and network namespace)",
        m.untrusted,
        Math.min(...runs.untrusted),
        Math.max(...runs.untrusted),
        plus(m.untrusted, m.off),
      ],
    ],
  ));
  out.push(
    `\nThe launcher alone: \`/bin/true\` ${median(bare).toFixed(1)} ms, through \`hermit __sandbox\` ${
      median(launched).toFixed(1)
    } ms (+${(median(launched) - median(bare)).toFixed(1)} ms).`,
  );
  out.push(
    `Per call (${calls} \`echo\` calls): unconfined p50 ${fmt(callsOff.p50)} µs, confined p50 ${
      fmt(callsOn.p50)
    } µs.\n`,
  );
  return out.join("\n");
}
