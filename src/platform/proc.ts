/**
 * Facts about processes that differ per OS: whether a pid is alive (zombies count as dead), its
 * start time (to guard against pid reuse), and whether any live process is left in a group.
 * Linux reads /proc; other POSIX systems ask `ps`; Windows asks `tasklist`/PowerShell.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import process from "node:process";

const linux = process.platform === "linux";
const windows = process.platform === "win32";

interface ProcStat {
  state: string;
  ppid: number;
  pgid: number;
  /** Clock ticks since boot (field 22): stable for the life of the process. */
  startTicks: string;
}

export function readProcStat(pid: number): ProcStat | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
    return { state: f[0], ppid: Number(f[1]), pgid: Number(f[2]), startTicks: f[19] };
  } catch {
    return undefined;
  }
}

/** True when `pid` exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (windows) return windowsStartTime(pid) !== undefined;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  if (linux) {
    const st = readProcStat(pid);
    return st !== undefined && st.state !== "Z" && st.state !== "X";
  }
  return true;
}

/**
 * An opaque string that changes when `pid` is reused by another process; undefined when the pid
 * is not running or the platform cannot tell.
 */
export function processStartTime(pid: number): string | undefined {
  if (linux) return readProcStat(pid)?.startTicks;
  if (windows) return windowsStartTime(pid);
  try {
    const out = execFileSync("ps", ["-o", "lstart=", "-p", String(pid)], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    return out.trim() || undefined;
  } catch {
    return undefined;
  }
}

function windowsStartTime(pid: number): string | undefined {
  try {
    const out = execFileSync(
      "powershell.exe",
      [
        "-NoProfile",
        "-NonInteractive",
        "-Command",
        `(Get-Process -Id ${pid} -ErrorAction Stop).StartTime.ToFileTimeUtc()`,
      ],
      { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], windowsHide: true },
    );
    return out.trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Pids of live (non-zombie) processes in process group `pgid`. Linux only; elsewhere undefined. */
export function groupMembers(pgid: number): number[] | undefined {
  if (!linux) return undefined;
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const st = readProcStat(Number(name));
    if (st && st.pgid === pgid && st.state !== "Z" && st.state !== "X") out.push(Number(name));
  }
  return out;
}

/** The groups among `pgids` that still have a live process; on Linux one pass over /proc. */
export function aliveGroups(pgids: Iterable<number>): Set<number> {
  const wanted = new Set(pgids);
  if (!linux || wanted.size <= 1) return new Set([...wanted].filter(groupAlive));
  const out = new Set<number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const st = readProcStat(Number(name));
    if (st && wanted.has(st.pgid) && st.state !== "Z" && st.state !== "X") out.add(st.pgid);
  }
  return out;
}

/** True while any live process remains in group `pgid`. */
export function groupAlive(pgid: number): boolean {
  if (windows) return isAlive(pgid);
  const members = groupMembers(pgid);
  if (members) return members.length > 0;
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

let ownPgid: number | undefined;
function ownGroup(): number | undefined {
  if (ownPgid === undefined && linux) ownPgid = readProcStat(process.pid)?.pgid;
  return ownPgid;
}

/** Send `signal` to every process in group `pgid`; false when none was there. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  if (pgid <= 1 || pgid === process.pid || pgid === ownGroup()) return false;
  if (windows) return killTreeWindows(pgid, signal === "SIGKILL");
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

function killTreeWindows(pid: number, force: boolean): boolean {
  try {
    execFileSync("taskkill", ["/PID", String(pid), "/T", ...(force ? ["/F"] : [])], {
      stdio: "ignore",
      windowsHide: true,
    });
    return true;
  } catch {
    return false;
  }
}
