/**
 * Daemons that leave their process group. A confined child can `setsid` (or double-fork) out of
 * the group hermit stops; to still catch it, hermit makes itself a child subreaper (Linux), so
 * an orphan from anywhere beneath it is re-parented to hermit instead of init. Such a stray is a
 * direct child hermit never started: its process group is none hermit tracks, and it carries the
 * sandbox's no-new-privileges bit (which nothing inside can clear), while hermit's own helpers
 * (the watchdog) do not. Strays are killed (with their group) and reaped whenever a confined
 * child's leader exits and when the gateway stops. If hermit itself is killed outright, its
 * strays go to init: they stay confined, but they live on.
 */
import { readdirSync, readFileSync } from "node:fs";
import process from "node:process";
import { libc } from "../platform/libc.ts";
import { readProcStat } from "../platform/proc.ts";
import { activeGroups } from "../process/group.ts";

const PR_SET_CHILD_SUBREAPER = 36;
const P_PID = 1;
const WEXITED = 4;
const WNOHANG = 1;

export interface ProcInfo {
  pid: number;
  ppid: number;
  pgid: number;
  state: string;
  /** NoNewPrivs is set. */
  nnp: boolean;
  cmdline: string;
}

/** The strays among `procs`: what `me` should kill. Pure. */
export function strays(
  me: { pid: number; nnp: boolean },
  procs: readonly ProcInfo[],
  tracked: ReadonlySet<number>,
): ProcInfo[] {
  const watchdog = `watchdog --ppid ${me.pid} --supervise`;
  return procs.filter((p) =>
    p.ppid === me.pid && !tracked.has(p.pgid) && p.nnp && !(me.nnp && p.cmdline.includes(watchdog))
  );
}

let subreaper: boolean | undefined;
const pause = new Int32Array(new SharedArrayBuffer(4));

/** Become the subreaper of everything hermit starts (once; Linux with FFI only). */
export function becomeSubreaper(): boolean {
  if (subreaper === undefined) {
    const c = process.platform === "linux" ? libc() : null;
    subreaper = !!c && c.call("prctl", PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) === 0;
  }
  return subreaper;
}

function nnpOf(pid: number | "self"): boolean {
  try {
    return /^NoNewPrivs:\s*1$/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false;
  }
}

/** hermit's direct children: each thread's `children` file, else a scan of /proc. */
function childPids(): number[] {
  try {
    return readdirSync("/proc/self/task").flatMap((t) =>
      readFileSync(`/proc/self/task/${t}/children`, "utf8").split(" ").filter(Boolean).map(Number)
    );
  } catch {
    try {
      return readdirSync("/proc").filter((d) => /^\d+$/.test(d)).map(Number);
    } catch {
      return [];
    }
  }
}

function children(): ProcInfo[] {
  const out: ProcInfo[] = [];
  for (const pid of childPids()) {
    const st = readProcStat(pid);
    if (!st || st.ppid !== process.pid) continue;
    let cmdline = "";
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
    } catch { /* gone */ }
    out.push({ pid, ppid: st.ppid, pgid: st.pgid, state: st.state, nnp: nnpOf(pid), cmdline });
  }
  return out;
}

/** Kill and reap the strays hermit has adopted; how many there were. */
export function stopStrays(): number {
  if (!subreaper) return 0;
  const found = strays({ pid: process.pid, nnp: nnpOf("self") }, children(), new Set(activeGroups()));
  const c = libc();
  for (const s of found) {
    if (s.state !== "Z") {
      for (const target of [-s.pid, s.pid]) {
        try {
          process.kill(target, "SIGKILL");
        } catch { /* not a group leader, or gone */ }
      }
    }
  }
  if (c) {
    // the kill lands asynchronously: wait (briefly) until each can be reaped
    const info = new Uint8Array(128);
    const view = new DataView(info.buffer);
    for (const s of found) {
      for (let i = 0; i < 100; i++) {
        info.fill(0);
        const r = c.call("waitid", P_PID, s.pid, c.address(info), WEXITED | WNOHANG, 0);
        if (r < 0 || view.getInt32(16, true) === s.pid) break; // reaped, or not ours to reap
        Atomics.wait(pause, 0, 0, 5);
      }
    }
  }
  return found.length;
}
