/**
 * Windows process trees, decided purely from a snapshot of the process table. Windows has no
 * process groups and never reparents an orphan: a process keeps naming its parent's pid after the
 * parent is gone, and that pid may since belong to someone else. So "the group" of a child hermit
 * started is its tree — the leader and everything descended from it — and every parent link is
 * checked against creation times: a process is a child of P only if it was created after P was,
 * and, if P's pid now belongs to a newer process, before that one was.
 *
 * `win_api.ts` takes the snapshot (NtQuerySystemInformation) and carries out the kills.
 */

export interface ProcEntry {
  pid: number;
  ppid: number;
  /** Creation time as a FILETIME (100 ns ticks since 1601); unique per pid at any one moment. */
  start: bigint;
}

/** A process identified beyond its pid: the pid plus its creation time. */
export interface ProcessId {
  pid: number;
  start: bigint;
}

/** Pids Windows reserves (System Idle Process, System): never part of anyone's tree. */
const RESERVED = new Set([0, 4]);

/** A snapshot of the process table indexed by pid and by parent pid, built once per snapshot. */
export interface ProcIndex {
  byPid: ReadonlyMap<number, ProcEntry>;
  children: ReadonlyMap<number, readonly ProcEntry[]>;
}

export function indexTable(table: readonly ProcEntry[]): ProcIndex {
  const byPid = new Map<number, ProcEntry>();
  const children = new Map<number, ProcEntry[]>();
  for (const p of table) {
    byPid.set(p.pid, p);
    if (RESERVED.has(p.pid) || p.pid === p.ppid) continue;
    const list = children.get(p.ppid);
    if (list) list.push(p);
    else children.set(p.ppid, [p]);
  }
  return { byPid, children };
}

/**
 * The pids of the live processes in the tree rooted at `root`: the root itself when it still
 * runs (same pid and creation time), and every descendant, following only parent links that the
 * creation times confirm. Works after the root has exited too (its orphans are still found).
 * Pass an index (`indexTable`) when asking about several trees of one snapshot.
 */
export function treeMembers(table: readonly ProcEntry[] | ProcIndex, root: ProcessId): number[] {
  const { byPid, children } = "byPid" in table ? table : indexTable(table);
  const out: number[] = [];
  const seen = new Set<number>();
  const holder = byPid.get(root.pid);
  if (holder && holder.start === root.start && !RESERVED.has(root.pid)) {
    out.push(root.pid);
    seen.add(root.pid);
  }
  const frontier: ProcessId[] = [root];
  while (frontier.length > 0) {
    const parent = frontier.pop()!;
    for (const c of children.get(parent.pid) ?? []) {
      if (seen.has(c.pid) || !isChildOf(c, parent, byPid.get(parent.pid))) continue;
      seen.add(c.pid);
      out.push(c.pid);
      frontier.push({ pid: c.pid, start: c.start });
    }
  }
  return out;
}

/**
 * Is `child` (whose ppid is `parent.pid`) really a child of `parent`, given `holder`, whoever
 * holds that pid now? It must have been created after the parent, and before any process that
 * reused the parent's pid.
 */
export function isChildOf(child: ProcEntry, parent: ProcessId, holder: ProcEntry | undefined): boolean {
  if (child.ppid !== parent.pid || child.start < parent.start) return false;
  if (holder && holder.start !== parent.start && child.start >= holder.start) return false;
  return true;
}

const STRIDE_MIN = 96;

/**
 * Reads a SYSTEM_PROCESS_INFORMATION list (NtQuerySystemInformation class 5, 64-bit layout):
 * NextEntryOffset at 0, CreateTime at 32, UniqueProcessId at 80, InheritedFromUniqueProcessId
 * at 88. Stops at a zero offset, a truncated record or a loop.
 */
export function parseProcessInformation(buf: Uint8Array, length = buf.length): ProcEntry[] {
  const v = new DataView(buf.buffer, buf.byteOffset, Math.min(length, buf.byteLength));
  const out: ProcEntry[] = [];
  let at = 0;
  for (;;) {
    if (at + STRIDE_MIN > v.byteLength) break;
    const next = v.getUint32(at, true);
    out.push({
      pid: Number(v.getBigUint64(at + 80, true)),
      ppid: Number(v.getBigUint64(at + 88, true)),
      start: v.getBigUint64(at + 32, true),
    });
    if (next === 0 || next < STRIDE_MIN) break;
    at += next;
  }
  return out;
}
