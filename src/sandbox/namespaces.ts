/**
 * The launcher's namespaces (Linux, raw syscalls, synchronous): a user namespace with its own IPC
 * and mount namespaces (and, for `network: none`, network namespace), and what is mounted in it:
 * a `/dev/shm` of its own, package caches' layers, and the mounts that cover protected paths.
 * `launcher.ts` decides when.
 */
import { writeFileSync } from "node:fs";
import process from "node:process";
import { cString, type Libc, O_CLOEXEC } from "../platform/syscalls.ts";
import { errnoName, fsView } from "./kernel.ts";
import type { FsRule } from "./landlock.ts";
import type { Layer } from "./layers.ts";

const CLONE_NEWNS = 0x00020000;
const CLONE_NEWIPC = 0x08000000;
const CLONE_NEWUSER = 0x10000000;
const CLONE_NEWNET = 0x40000000;
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
 * read-only one with a read-only mount of itself; how many are covered (a path gone since it was
 * listed counts: nothing is there), 0 unless all are. Inside the mount namespace `enterNamespaces`
 * made, whose `/` it made private (nothing here reaches the host's).
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
    // gone since the policy listed it (an agent that exited): nothing there to cover, and no
    // reason to give up the others' mounts
    if (dir === undefined) {
      done++;
      continue;
    }
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
