/**
 * Facts about processes that differ per OS: whether a pid is alive (zombies count as dead), its
 * start time (to guard against pid reuse), and whether any live process is left in a group.
 * Linux reads /proc; other POSIX systems ask `ps` (and kill(2), which answers "no such group"
 * without a /proc scan everywhere). Windows has no process groups: there a
 * "group" is the leader's process tree (`win_tree.ts`), read from the process table and killed
 * process by process through the Windows API (`win_api.ts`), with `tasklist`/`taskkill` as the
 * fallback where the runtime has no FFI.
 */
import type { execFileSync as ExecFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import process from "node:process";
import { winApiAvailable, winCreationTime, winProcessTable, winTerminate } from "./win_api.ts";
import { indexTable, type ProcIndex, treeMembers } from "./win_tree.ts";

const linux = process.platform === "linux";

/** `ps`, `tasklist` and friends are only asked off Linux: load child_process only then (it is not small). */
const execFileSync =
  ((...args: Parameters<typeof ExecFileSync>) =>
    (process.getBuiltinModule("node:child_process") as typeof import("node:child_process")).execFileSync(
      ...args,
    )) as typeof ExecFileSync;
const windows = process.platform === "win32";

/**
 * The system's own `ps`, `tasklist` or `taskkill`, by its path: looked up on PATH (or, on Windows,
 * in the working directory first) it could be a program a confined entry put in the project, run
 * unconfined. Pure.
 */
export function systemProgram(
  name: "ps" | "tasklist" | "taskkill" | "powershell",
  platform: NodeJS.Platform = process.platform,
  env: Readonly<Record<string, string | undefined>> = process.env,
): string {
  if (platform === "win32") {
    const dir = `${env.SystemRoot || "C:\\Windows"}\\System32`;
    return name === "powershell" ? `${dir}\\WindowsPowerShell\\v1.0\\powershell.exe` : `${dir}\\${name}.exe`;
  }
  return "/bin/ps"; // macOS and the BSDs; Linux reads /proc instead
}

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
  if (windows) return winApiAvailable() ? winCreationTime(pid) !== undefined : tasklistHas(pid);
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
 * is not running (a zombie included) or the platform cannot tell.
 */
export function processStartTime(pid: number): string | undefined {
  if (linux) {
    const st = readProcStat(pid);
    return st && st.state !== "Z" && st.state !== "X" ? st.startTicks : undefined;
  }
  if (windows) return winApiAvailable() ? winCreationTime(pid)?.toString() : windowsStartTime(pid);
  try {
    const out = execFileSync(systemProgram("ps"), ["-o", "lstart=", "-p", String(pid)], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    return out.trim() || undefined;
  } catch {
    return undefined;
  }
}

function tasklistHas(pid: number): boolean {
  try {
    const out = execFileSync(systemProgram("tasklist"), ["/FI", `PID eq ${pid}`, "/FO", "CSV", "/NH"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
      windowsHide: true,
    });
    return out.includes(`"${pid}"`);
  } catch {
    return false;
  }
}

function windowsStartTime(pid: number): string | undefined {
  try {
    const out = execFileSync(
      systemProgram("powershell"),
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

/**
 * Pids of live (non-zombie) processes in process group `pgid` (on Windows: the leader's tree).
 * Undefined where the platform cannot list them (macOS and other POSIX systems).
 */
export function groupMembers(pgid: number): number[] | undefined {
  if (windows) return windowsTree(pgid, windowsIndex());
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
  if (windows) {
    const index = windowsIndex();
    return new Set([...wanted].filter((g) => windowsTree(g, index).length > 0));
  }
  if (!linux || wanted.size <= 1) return new Set([...wanted].filter(groupAlive));
  const out = new Set<number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const st = readProcStat(Number(name));
    if (st && wanted.has(st.pgid) && st.state !== "Z" && st.state !== "X") out.add(st.pgid);
  }
  return out;
}

/**
 * True while any live process remains in group `pgid`. POSIX asks kill(2) first: no such group
 * ends it there. kill(2) counts zombies, so Linux then looks for one live member in /proc, twice
 * when the first look finds none: a member that forks and exits while /proc is read hides its
 * child (listed too late) from that look (a daemon answering SIGTERM with a `setsid` child does).
 */
export function groupAlive(pgid: number): boolean {
  if (windows) return windowsTree(pgid, windowsIndex()).length > 0;
  if (pgid > 1) {
    try {
      process.kill(-pgid, 0);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EPERM") return false;
    }
  }
  if (!linux) return pgid > 1;
  return liveMember(pgid) || liveMember(pgid);
}

/** Linux: one look through /proc for a live process in group `pgid`. */
function liveMember(pgid: number): boolean {
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const st = readProcStat(Number(name));
    if (st && st.pgid === pgid && st.state !== "Z" && st.state !== "X") return true;
  }
  return false;
}

let ownPgid: number | undefined;
function ownGroup(): number | undefined {
  if (ownPgid === undefined && linux) ownPgid = readProcStat(process.pid)?.pgid;
  return ownPgid;
}

/** Send `signal` to every process in group `pgid`; false when none was there. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  if (pgid <= 1 || pgid === process.pid || pgid === ownGroup()) return false;
  // Windows has no signals for console programs: either one ends the tree (stdin was closed first).
  if (windows) return killTreeWindows(pgid);
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/** Windows: group leaders (by pid) and their creation times, remembered while they run. */
const leaders = new Map<number, bigint>();

/**
 * Remember a new group leader's creation time (Windows; elsewhere a no-op), so its tree can be
 * told from strangers after it has exited and its pid is reused. `group.ts` and the watchdog call
 * this right after a spawn or a registration.
 */
export function trackGroup(pgid: number): void {
  if (!windows || leaders.has(pgid)) return;
  const start = winCreationTime(pgid);
  if (start !== undefined) leaders.set(pgid, start);
}

export function forgetGroup(pgid: number): void {
  leaders.delete(pgid);
}

/** The process table, indexed once; undefined without FFI. */
function windowsIndex(): ProcIndex | undefined {
  const table = winProcessTable();
  return table && indexTable(table);
}

/** Live members of the Windows "group" `pgid` (the leader's tree); [] when unknown. */
function windowsTree(pgid: number, index: ProcIndex | undefined): number[] {
  if (!index) return isAlive(pgid) ? [pgid] : []; // no FFI: only the leader is visible
  const start = leaders.get(pgid) ?? index.byPid.get(pgid)?.start;
  if (start === undefined) return [];
  return treeMembers(index, { pid: pgid, start });
}

function killTreeWindows(pgid: number): boolean {
  const index = windowsIndex();
  if (!index) {
    try {
      execFileSync(systemProgram("taskkill"), ["/PID", String(pgid), "/T", "/F"], {
        stdio: "ignore",
        windowsHide: true,
      });
      return true;
    } catch {
      return false;
    }
  }
  let any = false;
  for (const pid of windowsTree(pgid, index)) {
    if (winTerminate({ pid, start: index.byPid.get(pid)!.start })) any = true;
  }
  return any;
}
