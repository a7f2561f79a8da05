/**
 * The Linux calls the sandbox launcher makes on its own thread, each through raw syscalls
 * (`platform/syscalls.ts`) and each synchronous: dropping privileges, Landlock and seccomp (the
 * namespaces and their mounts are `namespaces.ts`'s), and the rules' paths as the kernel sees
 * them. `launcher.ts` decides the order.
 */
import { readdirSync, realpathSync, statSync } from "node:fs";
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

const PR_SET_NO_NEW_PRIVS = 38;
const PR_CAPBSET_DROP = 24;
const PR_CAP_AMBIENT = 47;
const PR_CAP_AMBIENT_CLEAR_ALL = 4;
const PR_SET_SECCOMP = 22;
const SECCOMP_MODE_FILTER = 2;
const RLIMIT_CORE = 4;
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
 * Rule paths as the kernel sees them: globs expanded, symlinks resolved, missing paths left out,
 * a declared `deny_read:` that is a socket or a directory marked to be hidden as the host's
 * sockets are, and a socket to hide left out where another rule re-opens the same file.
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
        const real = realpathSync(p);
        out.push(
          r.declaredDeny && !r.socket && holdsSockets(real) ? { ...r, path: real, socket: true } : {
            ...r,
            path: real,
          },
        );
      } catch {
        // does not exist: nothing to grant, nothing to protect
      }
    }
  }
  // a socket re-opened by another of its names (`/var/run/docker.sock`, a link to `/run`) stays open
  const reopened = new Set(out.filter((r) => r.level !== "deny").map((r) => r.path));
  return out.filter((r) => !(r.socket && reopened.has(r.path)));
}

/** A socket, or a directory (which may hold one): what Landlock cannot close to `connect()`. */
function holdsSockets(p: string): boolean {
  try {
    const st = statSync(p);
    return st.isSocket() || st.isDirectory();
  } catch {
    return false;
  }
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
