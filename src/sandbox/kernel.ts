/**
 * The Linux calls the sandbox launcher makes on its own thread, each through raw syscalls
 * (`platform/syscalls.ts`) and each synchronous: entering the namespaces, covering protected paths
 * with mounts, dropping privileges, Landlock and seccomp. `launcher.ts` decides the order.
 */
import { readdirSync, realpathSync, statSync, writeFileSync } from "node:fs";
import process from "node:process";
import { AT_FDCWD, cString, type Libc, O_CLOEXEC, O_FLAGS, O_PATH } from "../platform/syscalls.ts";
import {
  type Entry,
  type FsRule,
  handledNet,
  handledScopes,
  NET,
  planLandlock,
  rulesetAttrSize,
} from "./landlock.ts";
import type { Layer } from "./layers.ts";
import type { NetworkRule } from "./policy.ts";
import { seccompFilter, type SeccompNet } from "./seccomp.ts";
import { expandGlob } from "./secrets.ts";

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
export const errnoName = (r: number) => ERRNO[-r] ?? `errno ${-r}`;

const CLONE_NEWNS = 0x00020000;
const CLONE_NEWIPC = 0x08000000;
const CLONE_NEWUSER = 0x10000000;
const CLONE_NEWNET = 0x40000000;
const PR_SET_NO_NEW_PRIVS = 38;
const PR_CAPBSET_DROP = 24;
const PR_CAP_AMBIENT = 47;
const PR_CAP_AMBIENT_CLEAR_ALL = 4;
const PR_SET_SECCOMP = 22;
const SECCOMP_MODE_FILTER = 2;
const RLIMIT_CORE = 4;
const MS = {
  RDONLY: 1,
  NOSUID: 2,
  NODEV: 4,
  NOEXEC: 8,
  REMOUNT: 32,
  NOATIME: 1024,
  NODIRATIME: 2048,
  BIND: 4096,
  REC: 16384,
  PRIVATE: 1 << 18,
};

/** Install the seccomp filter for `mode` on this thread; why not, when the kernel refused it. */
export function installSeccomp(c: Libc, mode: SeccompNet): string | undefined {
  const filter = seccompFilter(c.arch, mode);
  const prog = new Uint8Array(16);
  const view = new DataView(prog.buffer);
  view.setUint16(0, filter.length / 8, true);
  view.setBigUint64(8, c.address(filter), true);
  const r = c.call("prctl", PR_SET_SECCOMP, SECCOMP_MODE_FILTER, c.address(prog), 0, 0);
  return r < 0 ? `the kernel refused the filter (${errnoName(r)})` : undefined;
}

/**
 * A new user namespace (the user's own uid and gid mapped) with its own IPC namespace (SysV shared
 * memory, semaphores, message queues) and mount namespace (a `/dev/shm` of its own; `hide`:
 * protected paths covered by mounts, `hideByMounts`), and, with `net`, a new network namespace
 * (its loopback brought up). The number of paths covered, or why there is no namespace.
 */
export function enterNamespaces(
  c: Libc,
  net: boolean,
  hide: FsRule[],
  pins: string[] = [],
  layers: readonly Layer[] = [],
): { mounts: number; layers: number } | string {
  const uid = process.getuid!();
  const gid = process.getgid!();
  const flags = CLONE_NEWUSER | CLONE_NEWNS | (net ? CLONE_NEWNET : 0);
  // its own SysV IPC and POSIX queues too (other processes' shared memory is the user's, and
  // writable); where the kernel refuses that, the namespace without it
  let r = c.call("unshare", flags | CLONE_NEWIPC);
  if (r < 0) r = c.call("unshare", flags);
  if (r < 0) return `the kernel refused one (${errnoName(r)})`;
  writeFileSync("/proc/self/setgroups", "deny");
  writeFileSync("/proc/self/uid_map", `${uid} ${uid} 1`);
  writeFileSync("/proc/self/gid_map", `${gid} ${gid} 1`);
  if (net) loopbackUp(c);
  c.call("mount", c.address(cString("none")), c.address(cString("/")), 0, MS.REC | MS.PRIVATE, 0);
  // a /dev/shm of its own (POSIX shared memory: other programs' files there are the user's, and
  // writable); best effort
  if (fsView.isDir("/dev/shm")) {
    const tmpfs = cString("tmpfs");
    const opts = cString("mode=1777");
    c.call(
      "mount",
      c.address(tmpfs),
      c.address(cString("/dev/shm")),
      c.address(tmpfs),
      MS.NOSUID | MS.NODEV,
      c.address(opts),
    );
  }
  const layered = layers.filter((l) => mountLayer(c, l)).length;
  return { mounts: hide.length ? hideByMounts(c, hide, pins) : 0, layers: layered };
}

/**
 * An overlay on `l.path` whose writes go to the entry's own upper directory: what the user's cache
 * holds stays readable, nothing in it is changed. Whether it was mounted (an older kernel or a
 * file system without user xattrs for the upper: the cache is then written in place).
 */
function mountLayer(c: Libc, l: Layer): boolean {
  const target = cString(l.path);
  const options = cString(`userxattr,lowerdir=${l.path},upperdir=${l.upper},workdir=${l.work}`);
  const overlay = cString("overlay");
  return c.call("mount", c.address(overlay), c.address(target), c.address(overlay), 0, c.address(options)) ===
    0;
}

/**
 * Rule paths as the kernel sees them: globs expanded, symlinks resolved, missing paths left out,
 * and a socket to hide left out where another rule re-opens the same file.
 */
export function expandRules(rules: readonly FsRule[]): FsRule[] {
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
        out.push({ ...r, path: realpathSync(p) });
      } catch {
        // does not exist: nothing to grant, nothing to protect
      }
    }
  }
  // a socket re-opened by another of its names (`/var/run/docker.sock`, a link to `/run`) stays open
  const reopened = new Set(out.filter((r) => r.level !== "deny").map((r) => r.path));
  return out.filter((r) => !(r.socket && reopened.has(r.path)));
}

export const fsView = {
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

/**
 * Restrict this thread with Landlock: the filesystem plan for `fs` (protected paths in `hidden`
 * are covered by mounts instead), TCP (none without a namespace; only `proxyPort` for a list),
 * scoping. The rules added and the narrowed directories, or why it failed.
 */
export function applyLandlock(
  c: Libc,
  abi: number,
  fs: FsRule[],
  net: { network: NetworkRule; proxyPort?: number; namespace: boolean },
  hidden: Set<string>,
): { rules: number; narrowed: string[] } | string {
  const ll = planLandlock(
    fs.length ? fs : [{ path: "/", level: "write" }],
    abi,
    fsView,
    (p) => hidden.has(p),
  );
  // TCP: none at all without a namespace (UDP is seccomp's); only the proxy for a list
  const tcp = net.network.mode === "allow" || (net.network.mode === "none" && !net.namespace);
  const attr = new BigUint64Array([
    BigInt(ll.handledFs),
    BigInt(tcp ? handledNet(abi) : 0),
    BigInt(handledScopes(abi)),
  ]);
  const ruleset = c.call("landlock_create_ruleset", c.address(attr), rulesetAttrSize(abi), 0);
  if (ruleset < 0) return `creating a ruleset failed (${errnoName(ruleset)})`;
  const nofollow = O_FLAGS[c.arch].O_NOFOLLOW;
  let added = 0;
  const beneath = new Uint8Array(12);
  const beneathView = new DataView(beneath.buffer);
  for (const rule of ll.rules) {
    const path = cString(rule.path);
    const fd = c.call("openat", AT_FDCWD, c.address(path), O_PATH | O_CLOEXEC | (rule.follow ? 0 : nofollow));
    if (fd < 0) continue;
    beneathView.setBigUint64(0, BigInt(rule.access), true);
    beneathView.setInt32(8, fd, true);
    if (c.call("landlock_add_rule", ruleset, 1, c.address(beneath), 0) === 0) added++;
    c.call("close", fd);
  }
  if (tcp && abi >= 4 && net.proxyPort) {
    const port = new BigUint64Array([BigInt(NET.CONNECT_TCP), BigInt(net.proxyPort)]);
    c.call("landlock_add_rule", ruleset, 2, c.address(port), 0);
  }
  const r = c.call("landlock_restrict_self", ruleset, 0);
  c.call("close", ruleset);
  return r < 0 ? `restricting failed (${errnoName(r)})` : { rules: added, narrowed: ll.narrowed };
}

/** `ip link set lo up` in the new network namespace. */
export function loopbackUp(c: Libc): void {
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

/**
 * The flags of the mount `target` lies on that a user namespace may not drop (nosuid, nodev,
 * noexec, the atime mode): a remount must repeat them. From `statfs`'s `f_flags` (offset 80 on
 * both architectures), whose `ST_*` bits are the `MS_*` ones but for relatime.
 */
function lockedFlags(c: Libc, target: Uint8Array): number {
  const buf = new BigUint64Array(16);
  if (c.call("statfs", c.address(target), c.address(buf)) < 0) return 0;
  const st = Number(buf[10]);
  const ST_RELATIME = 4096;
  const MS_RELATIME = 1 << 21;
  return (st & (MS.NOSUID | MS.NODEV | MS.NOEXEC | MS.NOATIME | MS.NODIRATIME)) |
    (st & ST_RELATIME ? MS_RELATIME : 0);
}

/**
 * Pin each of `pins` (a mount of itself: it can no longer be renamed or removed), then cover each
 * denied path with an empty read-only mount (a tmpfs, or /dev/null over a file) and each
 * read-only one with a read-only mount of itself; how many worked (0 unless all did). Inside the
 * mount namespace `enterNamespaces` made, whose `/` it made private (nothing here reaches the host's).
 */
export function hideByMounts(c: Libc, rules: FsRule[], pins: string[] = []): number {
  // first the pins (outermost first): a mount of itself cannot be renamed or removed
  for (const p of pins) {
    const target = cString(p);
    if (c.call("mount", c.address(target), c.address(target), 0, MS.BIND | MS.REC, 0) !== 0) return 0;
  }
  let done = 0;
  const tmpfs = cString("tmpfs");
  const devnull = cString("/dev/null");
  for (const { path: p, level } of rules) {
    const target = cString(p);
    const dir = fsView.isDir(p);
    if (dir === undefined) continue;
    let r: number;
    if (level === "read") {
      // itself, read-only: what is there stays readable, nothing in it can be changed or replaced
      const kept = lockedFlags(c, target);
      r = c.call("mount", c.address(target), c.address(target), 0, MS.BIND, 0);
      if (r === 0) r = c.call("mount", 0, c.address(target), 0, MS.BIND | MS.REMOUNT | MS.RDONLY | kept, 0);
    } else if (dir) {
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
  return done === rules.length ? done : 0;
}

/** No capabilities (inside the new user namespace or as root), no new privileges, no core dumps. */
export function dropPrivileges(c: Libc): void {
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
