/**
 * The launcher: hermit started as `hermit __sandbox PLAN TARGET ARGS…` confines its own thread
 * and then becomes TARGET with `execve` (same pid, same stdin/stdout, same process group: no
 * extra process and no hop). Linux only; everything here is synchronous, because an async call
 * would start a thread pool and a user namespace can only be entered by a single-threaded
 * process. In order:
 *
 * 1. a user namespace (with the user's own uid and gid mapped) holding new IPC and mount
 *    namespaces (its own SysV IPC and `/dev/shm`; a protected path inside a writable one, or a
 *    host's socket, covered by an empty read-only mount, a read-only path by a read-only mount of
 *    itself) and, for `network: none`, a new network namespace (its own loopback is brought up so
 *    a server can talk to itself), when the process has one thread and the kernel allows it;
 * 2. every capability dropped, no new privileges, no core dumps;
 * 3. Landlock with every right the running ABI knows (see `landlock.ts`), TCP connect only to the
 *    egress proxy's port for a destination list, and signal and abstract-socket scoping (ABI 6);
 * 4. where no network namespace could be had, the seccomp filter (`seccomp.ts`);
 * 5. a one-line JSON report on fd 3 (close-on-exec), then `execve`.
 *
 * Under `require` it refuses (exit 126, the reason in the report) rather than run with less: with
 * a part not enforced, or with the adapter's policy files writable for want of a mount namespace.
 */
import { readdirSync, writeFileSync } from "node:fs";
import process from "node:process";
import { cString, type Libc, libc } from "../platform/syscalls.ts";
import { type Capabilities, enforcement, launchGaps } from "./enforcement.ts";
import { applyLandlock, dropPrivileges, errnoName, expandRules, fsView, installSeccomp } from "./kernel.ts";
import type { Layer } from "./layers.ts";
import type { FsRule } from "./landlock.ts";
import { enterNamespaces } from "./namespaces.ts";
import type { NetworkRule } from "./policy.ts";

export const LAUNCHER_ARG = "__sandbox";
/**
 * The prefix under which the target's variables that act at a program's start (`LD_PRELOAD`,
 * `BUN_OPTIONS`…) reach the launcher, which sets them back under their names for the target.
 */
export const ENV_ASIDE = "HERMIT_SANDBOX_ENV_";

/** The target's environment from the launcher's: its own switches out, what was set aside back. Pure. */
export function targetEnv(
  env: Readonly<Record<string, string | undefined>>,
  launcherOnly: readonly string[],
): string[] {
  const out = new Map<string, string>();
  for (const [k, v] of Object.entries(env)) {
    if (v !== undefined && !launcherOnly.includes(k) && !k.startsWith(ENV_ASIDE)) out.set(k, v);
  }
  for (const [k, v] of Object.entries(env)) {
    if (v !== undefined && k.startsWith(ENV_ASIDE) && k.length > ENV_ASIDE.length) {
      out.set(k.slice(ENV_ASIDE.length), v);
    }
  }
  return [...out].map(([k, v]) => `${k}=${v}`);
}

/** The launcher's exit code when it refuses to run the target. */
export const REFUSED_EXIT = 126;

export interface LaunchPlan {
  label: string;
  /** Empty: the files are not confined (nothing to do for Landlock's filesystem part). */
  fs: FsRule[];
  network: NetworkRule;
  proxyPort?: number;
  require: boolean;
  /** Variables the parent set for the launcher alone; removed before the target runs. */
  launcherEnv: string[];
  /** Package caches the entry sees through a layer of its own (`layers.ts`). */
  layers?: Layer[];
}

export interface LaunchReport {
  caps: Capabilities;
  rules: number;
  /** Protected paths covered by a mount rather than left out of Landlock's rules. */
  mounts: number;
  /** Package caches given a layer of the entry's own (the rest are written in place). */
  layers?: number;
  /** Directories whose new entries are out of reach (see `landlock.ts`). */
  narrowed: string[];
  /** Read-only files left writable: no mount namespace to protect them with (`FsRule.soft`). */
  writable?: string[];
  refused?: string;
  /** execve failed: why. */
  exec?: string;
}

const F_SETFD = 2;
const FD_CLOEXEC = 1;
const REPORT_FD = 3;

/**
 * Paths that are protected but lie in a writable area: candidates for a mount (an empty one over
 * what is denied, a read-only one of itself over what may only be read).
 */
export function coveredByWrite(rules: readonly FsRule[]): FsRule[] {
  const levels = new Map(rules.map((r) => [r.path, r.level]));
  const nearest = (p: string) => {
    for (let q = p; q !== "/";) {
      q = q.slice(0, q.lastIndexOf("/")) || "/";
      const l = levels.get(q);
      if (l) return l;
    }
    return undefined;
  };
  // a protected path with something re-opened inside it is left to Landlock (a mount would cover both)
  const reopened = (r: FsRule) =>
    rules.some((q) =>
      q.path.startsWith(r.path + "/") && (r.level === "deny" ? q.level !== "deny" : q.level === "write")
    );
  return rules.filter((r) =>
    r.level !== "write" && (nearest(r.path) === "write" || (r.socket && r.level === "deny")) && !reopened(r)
  );
}

/**
 * The directories to pin (each a mount of itself, so it cannot be renamed or removed) for the
 * read-only paths among `covered`: every directory above them whose parent may be written (a
 * writable path nested in another included), so the adapter's directory, or one above it, cannot
 * be moved aside and a new policy put in its place. Outermost first (each pin's mount carries what
 * lies below it). Pure.
 */
export function pinnedDirs(rules: readonly FsRule[], covered: readonly FsRule[]): string[] {
  const levels = new Map(rules.map((r) => [r.path, r.level]));
  const parent = (p: string) => p.slice(0, p.lastIndexOf("/")) || "/";
  const levelOf = (p: string) => {
    for (let q = p;; q = parent(q)) {
      const l = levels.get(q);
      if (l !== undefined || q === "/") return l ?? "deny";
    }
  };
  const pins = new Set<string>();
  for (const r of covered) {
    if (r.level !== "read") continue;
    // a directory can be moved aside wherever its parent may be written: pin up to where it cannot
    const chain: string[] = [];
    for (let q = parent(r.path); q !== "/" && levelOf(parent(q)) === "write"; q = parent(q)) chain.push(q);
    for (const d of chain.reverse()) pins.add(d);
  }
  return [...pins].sort((a, b) => a.split("/").length - b.split("/").length);
}

export function runLauncher(argv: string[]): number {
  const [planText, target, ...rest] = argv;
  if (!planText || !target) {
    process.stderr.write("hermit: __sandbox is hermit's own launcher, not a command\n");
    return 2;
  }
  const plan = JSON.parse(planText) as LaunchPlan;
  const c = libc();
  const report: LaunchReport = {
    caps: {
      platform: "linux",
      landlockAbi: 0,
      namespace: false,
      seccomp: false,
      seatbelt: false,
      why: {},
    },
    rules: 0,
    mounts: 0,
    narrowed: [],
  };
  if (!c) {
    report.caps.why = { landlock: "no FFI", namespace: "no FFI", seccomp: "no FFI" };
    return finish(undefined, plan, report, target, [target, ...rest]);
  }
  // Before anything else: the namespaces need a single thread.
  const threads = readdirSync("/proc/self/task").length;
  const abi = Math.max(0, c.call("landlock_create_ruleset", 0, 0, 1));
  if (abi === 0) report.caps.why.landlock = "the kernel has none";

  const fs = expandRules(plan.fs);
  const wantNet = plan.network.mode === "none";
  const wantMounts = coveredByWrite(fs);
  const layers = (plan.layers ?? []).filter((l) => fsView.isDir(l.path));
  // always (where the kernel allows one): its own IPC and /dev/shm even with nothing to hide
  const ns = threads !== 1
    ? `the launcher runs ${threads} threads`
    : enterNamespaces(c, wantNet, wantMounts, pinnedDirs(fs, wantMounts), layers);
  if (typeof ns === "string") report.caps.why.namespace = ns;
  else {
    report.caps.namespace = wantNet;
    report.mounts = ns.mounts;
    if (layers.length) report.layers = ns.layers;
    // the working directory still names the directory under the new mounts: enter it again by
    // its path, so what is relative to it (./hermit.yaml, .serve/) meets them too
    if (ns.mounts || ns.layers) process.chdir(process.cwd());
  }
  if (!wantNet) delete report.caps.why.namespace;
  dropPrivileges(c);

  const hidden = new Set(report.mounts ? wantMounts.map((r) => r.path) : []);
  // without the mounts, what is protected only where a mount can do it stays writable (said)
  const soft = report.mounts ? [] : wantMounts.filter((r) => r.soft && r.level === "read");
  const said = soft.filter((r) => !r.quiet);
  if (said.length) report.writable = said.map((r) => r.path);
  const landlockFs = soft.length ? fs.filter((r) => !soft.includes(r)) : fs;
  if (abi > 0 && (fs.length > 0 || plan.network.mode !== "all")) {
    const r = applyLandlock(c, abi, landlockFs, { ...plan, namespace: report.caps.namespace }, hidden);
    if (typeof r === "string") report.caps.why.landlock = r;
    else Object.assign(report, r, { caps: { ...report.caps, landlockAbi: abi } });
  }
  // always the keyring block; the network's checks where a list or a cut network needs them
  const seccompNet = plan.network.mode === "allow"
    ? "tcp-only"
    : wantNet && !report.caps.namespace
    ? "none"
    : "all";
  const seccompWhy = installSeccomp(c, seccompNet);
  if (seccompNet !== "all") {
    if (seccompWhy) report.caps.why.seccomp = seccompWhy;
    else report.caps.seccomp = true;
  }
  return finish(c, plan, report, target, [target, ...rest]);
}

/**
 * Why the target may not run (undefined: it may): under `require`, what `enforcement` finds
 * missing and the gaps `require` refuses (a policy file left writable). Pure.
 */
export function refusal(
  plan: Pick<LaunchPlan, "label" | "fs" | "network" | "require">,
  report: Pick<LaunchReport, "caps" | "narrowed" | "writable">,
): string | undefined {
  if (!plan.require) return undefined;
  const e = enforcement({ off: false, network: plan.network }, report.caps);
  if (plan.fs.length === 0) e.missing = e.missing.filter((m) => !m.startsWith("files"));
  const lost = launchGaps(plan.label, report).filter((g) => g.refuses).map((g) => g.phrase);
  const reasons = [...e.missing, ...lost];
  return reasons.length ? reasons.join("; ") : undefined;
}

function finish(
  c: Libc | undefined,
  plan: LaunchPlan,
  report: LaunchReport,
  target: string,
  argv: string[],
): number {
  const refused = refusal(plan, report);
  if (refused) report.refused = refused;
  const say = (r: LaunchReport) => {
    const line = new TextEncoder().encode(JSON.stringify(r) + "\n");
    if (c) c.call("write", REPORT_FD, c.address(line), line.length);
    else {
      try {
        writeFileSync(REPORT_FD, line);
      } catch { /* no report channel */ }
    }
  };
  if (report.refused || !c) {
    say(report);
    return report.refused ? REFUSED_EXIT : 127;
  }
  c.call("fcntl", REPORT_FD, F_SETFD, FD_CLOEXEC);
  say(report);
  const env = targetEnv(process.env, plan.launcherEnv).map(cString);
  const args = argv.map(cString);
  const pointers = (list: Uint8Array[]) => new BigUint64Array([...list.map((b) => c.address(b)), 0n]);
  const argvp = pointers(args);
  const envp = pointers(env);
  const file = cString(target);
  const r = c.call("execve", c.address(file), c.address(argvp), c.address(envp));
  say({ ...report, exec: errnoName(r) });
  process.stderr.write(`hermit: ${plan.label}: cannot run ${target}: ${errnoName(r)}\n`);
  return 127;
}
