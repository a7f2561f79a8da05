/**
 * Processes that leave the group hermit put them in (`setsid`, `setpgid`: daemons) and would
 * otherwise outlive it. `findEscapes` decides, purely, from a table of hermit's descendants which
 * groups are escapes and where each came from (the tracked group whose lineage it is in, or none
 * when it was orphaned and re-parented to hermit before anyone saw its lineage). The rest reads
 * the facts:
 *  - Linux: hermit becomes a child subreaper (prctl PR_SET_CHILD_SUBREAPER through the runtime's
 *    FFI), so an orphan anywhere below it is re-parented to hermit instead of init and stays in
 *    reach; the table is hermit's subtree, walked through `/proc/<pid>/task/<tid>/children`. An
 *    adopted child the runtime did not start is reaped here when it exits (waitpid on that pid
 *    only: the runtime's own children are never touched).
 *  - macOS and other POSIX systems (no subreaper): the table comes from one `ps` when a group is
 *    stopped, so an escape whose parent chain to the group still stands is found; an orphan is not.
 *  - Windows has no sessions to escape into; its trees are handled in `platform/proc.ts`.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import process from "node:process";
import { libc } from "../platform/libc.ts";
import { readProcStat, systemProgram } from "../platform/proc.ts";

export interface ProcRow {
  pid: number;
  ppid: number;
  pgid: number;
  zombie: boolean;
}

export interface Escape {
  pgid: number;
  /** The tracked group whose lineage it left; undefined for an orphan hermit adopted. */
  owner: number | undefined;
}

export interface EscapeFacts {
  /** hermit's pid and its own group (never an escape: signalling it would stop hermit). */
  self: number;
  ownPgid: number | undefined;
  /** The groups hermit tracks (their leaders' pids). */
  tracked: ReadonlySet<number>;
  /** Children the runtime started that are not tracked groups (the watchdog): skipped whole. */
  runtimeChildren: ReadonlySet<number>;
}

/**
 * Walk hermit's subtree in `rows`: every live process whose group is neither tracked, nor
 * hermit's own, nor already its lineage's is an escape (one per group, first found wins). Also
 * the zombies among hermit's children that the runtime did not start (adopted orphans to reap).
 * Pure.
 */
export function findEscapes(
  rows: Iterable<ProcRow>,
  f: EscapeFacts,
): { escapes: Escape[]; zombies: number[] } {
  const children = new Map<number, ProcRow[]>();
  for (const r of rows) children.set(r.ppid, [...(children.get(r.ppid) ?? []), r]);
  const escapes = new Map<number, Escape>();
  const zombies: number[] = [];
  const seen = new Set<number>([f.self]);
  const visit = (row: ProcRow, owner: number | undefined, lineagePgid: number | undefined) => {
    if (seen.has(row.pid)) return;
    seen.add(row.pid);
    if (row.zombie) return;
    let pgid = lineagePgid;
    if (f.tracked.has(row.pgid)) {
      owner = row.pgid;
      pgid = row.pgid;
    } else if (row.pgid !== pgid && row.pgid > 1 && row.pgid !== f.ownPgid && row.pgid !== f.self) {
      if (!escapes.has(row.pgid) && !f.tracked.has(row.pgid)) {
        escapes.set(row.pgid, { pgid: row.pgid, owner });
      }
      pgid = row.pgid;
    }
    for (const c of children.get(row.pid) ?? []) visit(c, owner, pgid);
  };
  for (const c of children.get(f.self) ?? []) {
    if (f.runtimeChildren.has(c.pid)) continue;
    if (c.zombie) {
      if (!f.tracked.has(c.pid)) zombies.push(c.pid);
      continue;
    }
    visit(c, undefined, undefined);
  }
  return { escapes: [...escapes.values()], zombies };
}

/**
 * Which escapes join a stop that is under way (hermit keeps searching while it waits: a daemon
 * may answer SIGTERM with a new `setsid` child and exit). Of the escapes in `escaped` (pgid →
 * owner) not signalled yet: every one when all is being stopped (`owner` undefined); else those
 * that left `owner`'s lineage, and the orphans (owner unknown) hermit adopted since the stop
 * began — what the signalled groups leave behind as they exit. Pure.
 */
export function joiningStop(
  escaped: ReadonlyMap<number, number | undefined>,
  stop: { owner: number | undefined; before: ReadonlySet<number>; signalled: ReadonlySet<number> },
): number[] {
  return [...escaped].filter(([pgid, o]) =>
    !stop.signalled.has(pgid) &&
    (stop.owner === undefined || o === stop.owner || (o === undefined && !stop.before.has(pgid)))
  ).map(([pgid]) => pgid);
}

const linux = process.platform === "linux";

/**
 * Make this process a child subreaper (Linux): orphans below it are re-parented to it. False
 * where that is not possible (other systems, no FFI); then only escapes whose parent chain stands
 * can be found.
 */
export function becomeSubreaper(on = true): boolean {
  if (!linux) return false;
  const PR_SET_CHILD_SUBREAPER = 36;
  return libc()?.prctl(PR_SET_CHILD_SUBREAPER, on ? 1 : 0) === 0;
}

/** Reap adopted child `pid` if it has exited (never a child the runtime started). */
export function reapAdopted(pid: number): void {
  const WNOHANG = 1;
  libc()?.waitpid(pid, WNOHANG);
}

/**
 * The variable every group's processes carry (`group.ts` sets it; setsid, double forks and exec
 * keep it), naming the group they came from: how an orphan whose lineage nobody saw is told apart.
 */
export const GROUP_TAG_ENV = "HERMIT_GROUP_TAG";
/**
 * The start of every tag this hermit hands out (`<prefix>.<n>`): its pid and a random part, so a
 * process is taken for one of this hermit's only if it came from it, never from an earlier one
 * with the same pid. The watchdog gets it too, to find what escaped before hermit saw it.
 */
export const GROUP_TAG_PREFIX = `${process.pid}-${randomBytes(4).toString("hex")}`;

/**
 * The group tag in `pid`'s environment as it started (Linux: `/proc/<pid>/environ`); undefined
 * when it has none, cannot be read, or elsewhere.
 */
export function groupTagOf(pid: number): string | undefined {
  if (!linux) return undefined;
  try {
    const key = `${GROUP_TAG_ENV}=`;
    const entry = readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").find((e) => e.startsWith(key));
    return entry?.slice(key.length);
  } catch {
    return undefined;
  }
}

/**
 * The groups, other than `known`, of every process (but `self`) whose environment carries a tag
 * that starts with `prefix` (Linux: a walk of `/proc`; [] elsewhere). For the watchdog once hermit is gone: a
 * daemon that left its group in hermit's last second was never registered, but carries its tag.
 */
export function taggedGroups(
  prefix: string,
  known: ReadonlySet<number> = new Set(),
  self = process.pid,
): number[] {
  if (!linux || !/^[0-9a-f-]+$/.test(prefix)) return [];
  const found = new Set<number>();
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((d) => /^\d+$/.test(d) && Number(d) !== self);
  } catch {
    return [];
  }
  for (const pid of pids) {
    // the group first: a process in a group already known (a fork storm) is not read further
    const pgid = readProcStat(Number(pid))?.pgid;
    if (pgid === undefined || pgid <= 1 || known.has(pgid) || found.has(pgid)) continue;
    if (groupTagOf(Number(pid))?.startsWith(`${prefix}.`)) found.add(pgid);
  }
  return [...found];
}

/** Children of `pid` on Linux, from every thread's `children` file; undefined when unreadable. */
function childrenOf(pid: number): number[] | undefined {
  try {
    const out: number[] = [];
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim();
      if (text) { for (const c of text.split(" ")) out.push(Number(c)); }
    }
    return out;
  } catch {
    return undefined;
  }
}

/**
 * hermit's descendants as table rows. Linux: a walk from `self` through the `children` files (only
 * hermit's subtree is read); if the kernel lacks them, or elsewhere, every process from `ps`.
 */
export function descendantRows(self: number): ProcRow[] {
  if (linux && childrenOf(self) !== undefined) {
    const rows: ProcRow[] = [];
    const stack = [self];
    while (stack.length) {
      const pid = stack.pop()!;
      for (const c of childrenOf(pid) ?? []) {
        const st = readProcStat(c);
        if (!st) continue;
        rows.push({ pid: c, ppid: pid, pgid: st.pgid, zombie: st.state === "Z" || st.state === "X" });
        stack.push(c);
      }
    }
    return rows;
  }
  return psRows();
}

/** Every process, from `ps` (POSIX); [] when it cannot be run. */
export function psRows(): ProcRow[] {
  try {
    const out = execFileSync(systemProgram("ps"), ["-A", "-o", "pid=,ppid=,pgid=,stat="], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    return out.split("\n").flatMap((line) => {
      const [pid, ppid, pgid, stat] = line.trim().split(/\s+/);
      if (!pid || !stat) return [];
      return [{ pid: Number(pid), ppid: Number(ppid), pgid: Number(pgid), zombie: stat.startsWith("Z") }];
    });
  } catch {
    return [];
  }
}
