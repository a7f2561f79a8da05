/**
 * The launcher: hermit started as `hermit __sandbox PLAN TARGET ARGS…` confines its own thread
 * and then becomes TARGET with `execve` (same pid, same stdin/stdout, same process group: no
 * extra process and no hop). Linux only; everything here is synchronous, because an async call
 * would start a thread pool and a user namespace can only be entered by a single-threaded
 * process. In order:
 *
 * 1. a user namespace (with the user's own uid and gid mapped) holding a new network namespace
 *    (`network: none`; its own loopback is brought up so a server can talk to itself) and/or a new
 *    mount namespace (where a protected path lies inside a writable one: it is covered by an
 *    empty read-only mount), when the process has one thread and the kernel allows it;
 * 2. every capability dropped, no new privileges, no core dumps;
 * 3. Landlock with every right the running ABI knows (see `landlock.ts`), TCP connect only to the
 *    egress proxy's port for a destination list, and signal and abstract-socket scoping (ABI 6);
 * 4. where no network namespace could be had, the seccomp filter (`seccomp.ts`);
 * 5. a one-line JSON report on fd 3 (close-on-exec), then `execve`.
 *
 * Under `require` it refuses (exit 126, the reason in the report) rather than run with less.
 */
import { readdirSync, realpathSync, statSync, writeFileSync } from "node:fs";
import process from "node:process";
import { AT_FDCWD, cString, type Libc, libc, O_CLOEXEC, O_FLAGS, O_PATH } from "../platform/libc.ts";
import { type Capabilities, enforcement } from "./enforcement.ts";
import {
  type Entry,
  type FsRule,
  handledNet,
  handledScopes,
  NET,
  planLandlock,
  rulesetAttrSize,
} from "./landlock.ts";
import type { NetworkRule } from "./policy.ts";
import { seccompFilter } from "./seccomp.ts";
import { expandGlob } from "./secrets.ts";

export const LAUNCHER_ARG = "__sandbox";
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
}

export interface LaunchReport {
  caps: Capabilities;
  rules: number;
  /** Protected paths covered by a mount rather than left out of Landlock's rules. */
  mounts: number;
  /** Directories whose new entries are out of reach (see `landlock.ts`). */
  narrowed: string[];
  refused?: string;
  /** execve failed: why. */
  exec?: string;
}

const ERRNO: Record<number, string> = {
  1: "EPERM",
  2: "ENOENT",
  7: "E2BIG",
  8: "ENOEXEC",
  9: "EBADF",
  13: "EACCES",
  20: "ENOTDIR",
  22: "EINVAL",
  28: "ENOSPC",
  38: "ENOSYS",
  87: "EUSERS",
  95: "EOPNOTSUPP",
};
const errnoName = (r: number) => ERRNO[-r] ?? `errno ${-r}`;

const CLONE_NEWNS = 0x00020000;
const CLONE_NEWUSER = 0x10000000;
const CLONE_NEWNET = 0x40000000;
const PR_SET_NO_NEW_PRIVS = 38;
const PR_CAPBSET_DROP = 24;
const PR_CAP_AMBIENT = 47;
const PR_CAP_AMBIENT_CLEAR_ALL = 4;
const PR_SET_SECCOMP = 22;
const SECCOMP_MODE_FILTER = 2;
const RLIMIT_CORE = 4;
const F_SETFD = 2;
const FD_CLOEXEC = 1;
const MS = {
  RDONLY: 1,
  NOSUID: 2,
  NODEV: 4,
  NOEXEC: 8,
  REMOUNT: 32,
  BIND: 4096,
  REC: 16384,
  PRIVATE: 1 << 18,
};
const REPORT_FD = 3;

/** Paths that are protected but lie in a writable area: candidates for an empty mount. */
export function coveredByWrite(rules: readonly FsRule[]): string[] {
  const levels = new Map(rules.map((r) => [r.path, r.level]));
  const nearest = (p: string) => {
    for (let q = p; q !== "/";) {
      q = q.slice(0, q.lastIndexOf("/")) || "/";
      const l = levels.get(q);
      if (l) return l;
    }
    return undefined;
  };
  return rules.filter((r) => r.level === "deny" && nearest(r.path) === "write").map((r) => r.path);
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
  if (wantNet || wantMounts.length) {
    if (threads !== 1) report.caps.why.namespace = `the launcher runs ${threads} threads`;
    else {
      const uid = process.getuid!();
      const gid = process.getgid!();
      const r = c.call(
        "unshare",
        CLONE_NEWUSER | (wantNet ? CLONE_NEWNET : 0) | (wantMounts.length ? CLONE_NEWNS : 0),
      );
      if (r < 0) report.caps.why.namespace = `the kernel refused one (${errnoName(r)})`;
      else {
        writeFileSync("/proc/self/setgroups", "deny");
        writeFileSync("/proc/self/uid_map", `${uid} ${uid} 1`);
        writeFileSync("/proc/self/gid_map", `${gid} ${gid} 1`);
        report.caps.namespace = wantNet;
        if (wantNet) loopbackUp(c);
        if (wantMounts.length) report.mounts = hideByMounts(c, wantMounts);
      }
    }
  }
  if (!wantNet) delete report.caps.why.namespace;
  dropPrivileges(c);

  const hidden = new Set(report.mounts ? wantMounts : []);
  if (abi > 0 && (fs.length > 0 || plan.network.mode !== "all")) {
    const r = landlock(c, abi, fs, plan, report.caps.namespace, hidden, report);
    if (r === undefined) report.caps.landlockAbi = abi;
    else report.caps.why.landlock = r;
  }
  const needSeccomp = plan.network.mode === "allow" || (wantNet && !report.caps.namespace);
  if (needSeccomp) {
    const filter = seccompFilter(c.arch, plan.network.mode === "allow" ? "tcp-only" : "none");
    const prog = new Uint8Array(16);
    const view = new DataView(prog.buffer);
    view.setUint16(0, filter.length / 8, true);
    view.setBigUint64(8, c.address(filter), true);
    const r = c.call("prctl", PR_SET_SECCOMP, SECCOMP_MODE_FILTER, c.address(prog), 0, 0);
    if (r < 0) report.caps.why.seccomp = `the kernel refused the filter (${errnoName(r)})`;
    else report.caps.seccomp = true;
  }
  return finish(c, plan, report, target, [target, ...rest]);
}

/** Rule paths as the kernel sees them: globs expanded, symlinks resolved, missing paths left out. */
function expandRules(rules: readonly FsRule[]): FsRule[] {
  const out: FsRule[] = [];
  const list = (dir: string) => {
    try {
      return readdirSync(dir);
    } catch {
      return undefined;
    }
  };
  for (const r of rules) {
    for (const p of expandGlob(r.path, list)) {
      try {
        out.push({ path: realpathSync(p), level: r.level });
      } catch {
        // does not exist: nothing to grant, nothing to protect
      }
    }
  }
  return out;
}

const view = {
  list(dir: string): Entry[] | undefined {
    try {
      return readdirSync(dir, { withFileTypes: true }).map((d) => ({
        name: d.name,
        dir: d.isDirectory(),
        symlink: d.isSymbolicLink(),
      }));
    } catch {
      return undefined;
    }
  },
  isDir(p: string): boolean | undefined {
    try {
      return statSync(p).isDirectory();
    } catch {
      return undefined;
    }
  },
};

function landlock(
  c: Libc,
  abi: number,
  fs: FsRule[],
  plan: LaunchPlan,
  namespace: boolean,
  hidden: Set<string>,
  report: LaunchReport,
): string | undefined {
  const ll = planLandlock(fs.length ? fs : [{ path: "/", level: "write" }], abi, view, (p) => hidden.has(p));
  // TCP: none at all without a namespace (UDP is seccomp's); only the proxy for a list
  const tcp = plan.network.mode === "allow" || (plan.network.mode === "none" && !namespace);
  const attr = new BigUint64Array([
    BigInt(ll.handledFs),
    BigInt(tcp ? handledNet(abi) : 0),
    BigInt(handledScopes(abi)),
  ]);
  const ruleset = c.call("landlock_create_ruleset", c.address(attr), rulesetAttrSize(abi), 0);
  if (ruleset < 0) return `creating a ruleset failed (${errnoName(ruleset)})`;
  const nofollow = O_FLAGS[c.arch].O_NOFOLLOW;
  const beneath = new Uint8Array(12);
  const beneathView = new DataView(beneath.buffer);
  for (const rule of ll.rules) {
    const path = cString(rule.path);
    const fd = c.call("openat", AT_FDCWD, c.address(path), O_PATH | O_CLOEXEC | (rule.follow ? 0 : nofollow));
    if (fd < 0) continue;
    beneathView.setBigUint64(0, BigInt(rule.access), true);
    beneathView.setInt32(8, fd, true);
    if (c.call("landlock_add_rule", ruleset, 1, c.address(beneath), 0) === 0) report.rules++;
    c.call("close", fd);
  }
  if (tcp && abi >= 4 && plan.proxyPort) {
    const port = new BigUint64Array([BigInt(NET.CONNECT_TCP), BigInt(plan.proxyPort)]);
    c.call("landlock_add_rule", ruleset, 2, c.address(port), 0);
  }
  report.narrowed = ll.narrowed;
  const r = c.call("landlock_restrict_self", ruleset, 0);
  c.call("close", ruleset);
  return r < 0 ? `restricting failed (${errnoName(r)})` : undefined;
}

/** `ip link set lo up` in the new network namespace. */
function loopbackUp(c: Libc): void {
  const fd = c.call("socket", 2, /* AF_INET */ 2 | O_CLOEXEC, /* SOCK_DGRAM|SOCK_CLOEXEC */ 0);
  if (fd < 0) return;
  const ifr = new Uint8Array(40);
  ifr.set(cString("lo"));
  if (c.call("ioctl", fd, 0x8913, /* SIOCGIFFLAGS */ c.address(ifr)) === 0) {
    const flags = new DataView(ifr.buffer);
    flags.setUint16(16, flags.getUint16(16, true) | 1, /* IFF_UP */ true);
    c.call("ioctl", fd, 0x8914, /* SIOCSIFFLAGS */ c.address(ifr));
  }
  c.call("close", fd);
}

/** Cover each path with an empty read-only mount (a tmpfs, or /dev/null over a file); how many worked. */
function hideByMounts(c: Libc, paths: string[]): number {
  const none = cString("none");
  c.call("mount", c.address(none), c.address(cString("/")), 0, MS.REC | MS.PRIVATE, 0);
  let done = 0;
  const tmpfs = cString("tmpfs");
  const devnull = cString("/dev/null");
  for (const p of paths) {
    const target = cString(p);
    const dir = view.isDir(p);
    if (dir === undefined) continue;
    let r: number;
    if (dir) {
      const opts = cString("mode=000,size=4k");
      r = c.call(
        "mount",
        c.address(tmpfs),
        c.address(target),
        c.address(tmpfs),
        MS.RDONLY | MS.NOSUID | MS.NODEV | MS.NOEXEC,
        c.address(opts),
      );
    } else {
      r = c.call("mount", c.address(devnull), c.address(target), 0, MS.BIND, 0);
      if (r === 0) {
        r = c.call("mount", 0, c.address(target), 0, MS.BIND | MS.REMOUNT | MS.RDONLY, 0);
      }
    }
    if (r === 0) done++;
  }
  return done === paths.length ? done : 0;
}

/** No capabilities (inside the new user namespace or as root), no new privileges, no core dumps. */
function dropPrivileges(c: Libc): void {
  for (let cap = 0; cap < 64; cap++) {
    if (c.call("prctl", PR_CAPBSET_DROP, cap, 0, 0, 0) === -22 /* EINVAL: past the last one */) break;
  }
  c.call("prctl", PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  const header = new Uint32Array([0x20080522, /* _LINUX_CAPABILITY_VERSION_3 */ 0]);
  const data = new Uint32Array(6);
  c.call("capset", c.address(header), c.address(data));
  c.call("prctl", PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  const zero = new BigUint64Array(2);
  c.call("prlimit64", 0, RLIMIT_CORE, c.address(zero), 0);
}

function finish(
  c: Libc | undefined,
  plan: LaunchPlan,
  report: LaunchReport,
  target: string,
  argv: string[],
): number {
  const e = enforcement({ off: false, network: plan.network }, report.caps);
  if (plan.fs.length === 0) e.missing = e.missing.filter((m) => !m.startsWith("files"));
  if (plan.require && e.missing.length) report.refused = e.missing.join("; ");
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
  const env = Object.entries(process.env)
    .filter(([k, v]) => v !== undefined && !plan.launcherEnv.includes(k))
    .map(([k, v]) => cString(`${k}=${v}`));
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
