/**
 * How a confined child is started on each platform (`startConfined`). Linux: through hermit's own
 * launcher (`hermit __sandbox PLAN TARGET ARGS…`, in its own process group like every child),
 * whose report arrives on an extra pipe (fd 3) before the target runs: the launcher closes it
 * when it execs, or writes why it did not. macOS: through `sandbox-exec` with the generated
 * profile. Elsewhere plainly. Also what a confined child needs before it starts: the directories
 * its policy may write that must exist first, and its environment (its TMPDIR, the variables for
 * the egress proxy and for working offline).
 */
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { log } from "../log.ts";
import { selfCommand } from "../platform/runtime.ts";
import { type ProcessGroup, spawnInGroup } from "../process/group.ts";
import { ENV_ASIDE, LAUNCHER_ARG, type LaunchPlan, type LaunchReport } from "./launcher.ts";
import type { Layer } from "./layers.ts";
import { managerOf, type NetworkRule, type Policy } from "./policy.ts";
import { seatbeltProfile } from "./seatbelt.ts";

export interface SpawnRequest {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}

/** What the launcher's runtime must not start with (extra threads would rule out namespaces). */
const LAUNCHER_ENV: Record<string, string> = {
  BUN_JSC_useConcurrentGC: "0",
  BUN_JSC_useConcurrentJIT: "0",
  BUN_JSC_useWarmUpMarkedBlocks: "0",
};

/**
 * Variables the dynamic loader or the runtime acts on as a program starts (`LD_PRELOAD` loads a
 * library, `BUN_OPTIONS=--preload` runs a script, `BUN_BE_BUN` makes the binary Bun's CLI;
 * `DENO_V8_FLAGS` and `DENO_DIR` for a launcher run from the sources under Deno): in the
 * launcher they would run before anything is confined, so an entry's `env:` could run code
 * unconfined while the entry shows as confined. The launcher starts without them; they are set
 * again for the target, which runs confined.
 */
const RUNS_AT_START = /^(?:LD_|BUN_|DENO_)|^(?:NODE_OPTIONS|GCONV_PATH|GLIBC_TUNABLES|LOCPATH)$/;

/**
 * The launcher's environment for a target's `env`: what runs at start set aside under
 * `ENV_ASIDE` (the launcher restores it before it execs), and the launcher's own switches. Pure.
 */
export function launcherEnvFor(env: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) out[RUNS_AT_START.test(k) ? ENV_ASIDE + k : k] = v;
  return { ...out, ...LAUNCHER_ENV };
}

/** How `startConfined` confines one start. */
export interface ConfinedStart {
  platform: NodeJS.Platform;
  /** macOS: `sandbox-exec` is there. */
  seatbelt: boolean;
  /** The entry's label (`mcp_servers.NAME`, `tools.NAME`). */
  label: string;
  policy: Policy;
  /** The entry's egress proxy, under a `network:` list. */
  proxyPort: number | undefined;
  /** Its own layers over the package caches (Linux; made here before it starts). */
  layers?: Layer[];
}

/**
 * Start `req` (its environment already `confinedEnv`'s) confined by `how.policy` as the platform
 * allows, once what it may write exists. Linux: the launcher's report comes back with the group;
 * elsewhere there is none (the forecast is all there is).
 */
export async function startConfined(
  how: ConfinedStart,
  req: SpawnRequest,
  stdio: "pipe"[],
): Promise<{ group: ProcessGroup; report?: LaunchReport }> {
  const { policy, proxyPort } = how;
  prepareCaches(req.command, policy);
  if (how.platform === "linux") {
    const plan: LaunchPlan = {
      label: how.label,
      fs: policy.fs,
      network: policy.network,
      proxyPort,
      require: policy.require,
      launcherEnv: [],
      layers: prepareLayers(how.layers ?? []),
    };
    log.debug(`${how.label}: sandbox plan ${JSON.stringify(plan)}`);
    return await throughLauncher(plan, req, stdio);
  }
  const group = how.platform === "darwin" && how.seatbelt
    ? throughSeatbelt(seatbeltProfile({ fs: policy.fs, network: policy.network, proxyPort }), req, stdio)
    : spawnInGroup(req.command, req.args, { env: req.env, cwd: req.cwd, stdio });
  return { group };
}

/** The layers whose directories could be made (0700: only ours). */
function prepareLayers(layers: readonly Layer[]): Layer[] {
  return layers.filter((l) => {
    if (!existsSync(l.path)) return false; // no cache to layer (the launcher would skip it too)
    try {
      mkdirSync(l.upper, { recursive: true, mode: 0o700 });
      mkdirSync(l.work, { recursive: true, mode: 0o700 });
      return true;
    } catch {
      return false; // the cache is written in place
    }
  });
}

/**
 * What must exist before the sandbox closes: the cache of the command's package manager, and
 * declared `write:` directories (written with a trailing `/`). Landlock grants only what exists.
 */
function prepareCaches(command: string, policy: Policy): void {
  const manager = managerOf(command);
  const dirs = [...policy.caches.filter((c) => c.manager === manager).map((c) => c.path), ...policy.create];
  for (const d of dirs) {
    try {
      mkdirSync(d, { recursive: true, mode: 0o700 });
    } catch { /* read-only: the child will say so */ }
  }
}

/**
 * Start `req` through the launcher; resolves with its group once the launcher has reported (the
 * target is then running, or the launcher refused and is exiting). Throws when the launcher
 * ended without a report.
 */
export async function throughLauncher(
  plan: LaunchPlan,
  req: SpawnRequest,
  stdio: "pipe"[],
): Promise<{ group: ProcessGroup; report: LaunchReport }> {
  plan.launcherEnv = Object.keys(LAUNCHER_ENV);
  const [cmd, ...pre] = selfCommand();
  const group = spawnInGroup(cmd, [...pre, LAUNCHER_ARG, JSON.stringify(plan), req.command, ...req.args], {
    env: launcherEnvFor(req.env),
    cwd: req.cwd,
    stdio: [...stdio, "pipe"],
  });
  const report = await readReport(group);
  if (!report) {
    const status = await group.exited;
    throw new Error(
      `the sandbox launcher failed before starting ${path.basename(req.command)} (${status.reason})`,
    );
  }
  return { group, report };
}

/** macOS: `sandbox-exec -p PROFILE TARGET ARGS…`. */
export function throughSeatbelt(profile: string, req: SpawnRequest, stdio: "pipe"[]): ProcessGroup {
  return spawnInGroup("/usr/bin/sandbox-exec", ["-p", profile, req.command, ...req.args], {
    env: req.env,
    cwd: req.cwd,
    stdio,
  });
}

/** For `network: none`: npm/npx and pnpm, and uv/uvx, use their caches only. */
export const OFFLINE_ENV: Record<string, string> = { npm_config_offline: "true", UV_OFFLINE: "1" };

/**
 * The environment of a confined child: `env` with its private TMPDIR, the egress proxy's
 * variables, and under `network: none` OFFLINE_ENV where `env` does not set them. Pure.
 */
export function confinedEnv(
  env: Readonly<Record<string, string>>,
  network: NetworkRule,
  tmpDir: string | undefined,
  proxyPort: number | undefined,
): Record<string, string> {
  const out: Record<string, string> = { ...env };
  if (tmpDir) out.TMPDIR = tmpDir;
  if (proxyPort) Object.assign(out, proxyEnv(proxyPort));
  // without a network, package managers answer from their caches at once instead of retrying
  if (network.mode === "none") {
    for (const [k, v] of Object.entries(OFFLINE_ENV)) if (!(k in env)) out[k] = v;
  }
  return out;
}

/** The variables proxy-aware clients read (curl reads the lower-case ones). */
export function proxyEnv(port: number): Record<string, string> {
  const url = `http://127.0.0.1:${port}`;
  return {
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    ALL_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    all_proxy: url,
    NO_PROXY: "",
    no_proxy: "",
    NODE_USE_ENV_PROXY: "1",
  };
}

/** The launcher's report from fd 3 (undefined when it ended without one). */
function readReport(group: ProcessGroup): Promise<LaunchReport | undefined> {
  const channel = group.child.stdio[3] as NodeJS.ReadableStream | null | undefined;
  if (!channel) return group.exited.then(() => undefined);
  return new Promise((resolve) => {
    let text = "";
    let done = false;
    const end = () => {
      if (done) return;
      done = true;
      const lines = text.split("\n").filter((l) => l.trim());
      try {
        const report = JSON.parse(lines[0]) as LaunchReport;
        const exec = lines[1] ? (JSON.parse(lines[1]) as LaunchReport).exec : undefined;
        resolve(exec ? { ...report, exec } : report);
      } catch {
        resolve(undefined);
      }
    };
    channel.setEncoding?.("utf8");
    channel.on("data", (d: string) => (text += d));
    channel.once("end", end);
    channel.once("close", end);
    channel.once("error", end);
    void group.exited.then(() => setTimeout(end, 50));
  });
}
