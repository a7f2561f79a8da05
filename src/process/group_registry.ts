/**
 * What hermit has running and must stop: the groups it started (each `ProcessGroup` registers
 * itself while anything of it runs) and the escapes from them. Listeners (the watchdog
 * supervisor client) are told of every group that starts or is gone, escapes included.
 * A process that leaves its group (a `setsid` daemon) is an escape (`escapes.ts` decides which):
 * once `trackEscapes()` runs (Linux: hermit becomes a child subreaper and looks every
 * ESCAPE_POLL_MS), each escaped group is registered like a group, owned by the group whose
 * lineage it left, stopped with that group (on a timeout or cancel too), and with everything else
 * when hermit stops. A stop also looks right before its signals (the only look outside a stop on
 * systems without a subreaper) and keeps looking until it is done: a daemon that answers SIGTERM
 * with a new `setsid` child and exits leaves an orphan that is stopped too (`joiningStop`).
 * `terminate` is how a set of groups is stopped: SIGTERM, a grace period, SIGKILL.
 */
import process from "node:process";
import { log } from "../log.ts";
import { forgetGroup, groupAlive, readProcStat, signalGroup, trackGroup } from "../platform/proc.ts";
import {
  becomeSubreaper,
  descendantRows,
  findEscapes,
  groupTagOf,
  joiningStop,
  type ProcRow,
  reapAdopted,
} from "./escapes.ts";
import type { ProcessGroup } from "./group.ts";
import { sleep } from "./wait.ts";

/** How often hermit's subtree is searched for escapes, once `trackEscapes()` has run (Linux). */
const ESCAPE_POLL_MS = 1000;
/** How often a stop searches again while it waits (a `/proc` walk on Linux, a `ps` elsewhere). */
const FOLLOW_MS = process.platform === "linux" ? 100 : 500;
/** How long a stop waits for SIGKILLed groups to empty. */
const KILL_WAIT_MS = 2000;

/** "prepare": a group is about to be spawned (no pgid yet: 0); "add"/"remove": it started / is gone. */
type Listener = (event: "prepare" | "add" | "remove", pgid: number) => void;
const listeners = new Set<Listener>();
const groups = new Set<ProcessGroup>();
/** Escaped groups: pgid → the group whose lineage it left (undefined: an adopted orphan). */
const escaped = new Map<number, number | undefined>();
/** Each group's tag (`GROUP_TAG_ENV` in its processes' environment) → the group, until it is stopped. */
const tagged = new Map<string, ProcessGroup>();
/** Children the runtime started outside any group (the watchdog): never reaped or searched here. */
const runtimeChildren = new Set<number>();
let escapesOn = false;
let escapePoll: ReturnType<typeof setInterval> | undefined;

/** Be told when a group starts or is gone (the watchdog supervisor client listens). */
export function onGroupChange(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/**
 * A group is about to be spawned: listeners get ready before its first instruction runs (the
 * watchdog starts now, not after the child: a child that is quick, or a hermit descheduled on a
 * busy machine, must not see hermit killed while no watchdog exists to hear of it).
 */
export function prepareGroup(): void {
  for (const l of listeners) l("prepare", 0);
}

/** A group that has started (one without a pgid never did): watched until `unregisterGroup`. */
export function registerGroup(group: ProcessGroup): void {
  const pgid = group.pgid;
  if (pgid === undefined) return;
  // escapes of an earlier group with this (reused) id now belong to hermit as a whole
  for (const [g, owner] of escaped) if (owner === pgid) escaped.set(g, undefined);
  for (const [tag, g] of tagged) if (g.pgid === pgid) tagged.delete(tag);
  groups.add(group);
  tagged.set(group.tag, group);
  for (const l of listeners) l("add", pgid);
}

export function isRegistered(group: ProcessGroup): boolean {
  return groups.has(group);
}

/** Drop `group` (nothing of it is left, or it was stopped): never signalled again. */
export function unregisterGroup(group: ProcessGroup): void {
  if (group.pgid === undefined || !groups.delete(group)) return;
  forgetGroup(group.pgid);
  for (const l of listeners) l("remove", group.pgid);
}

/** `group` has been stopped, what escaped from it too: its tag names no group any more. */
export function forgetTag(group: ProcessGroup): void {
  if (tagged.get(group.tag) === group) tagged.delete(group.tag);
}

/**
 * The group an orphan came from, by the tag in its environment (any live process of escaped group
 * `pgid` in `rows`): the group's id while no other group has taken that id since.
 */
function ownerByTag(pgid: number, rows: ProcRow[]): number | undefined {
  for (const r of rows) {
    if (r.pgid !== pgid || r.zombie) continue;
    const tag = groupTagOf(r.pid);
    const group = tag === undefined ? undefined : tagged.get(tag);
    if (group) return group.pgid;
  }
  return undefined;
}

/** The groups hermit started that are still registered. */
export function registeredGroups(): ProcessGroup[] {
  return [...groups];
}

function groupIds(): number[] {
  return [...groups].map((g) => g.pgid).filter((p): p is number => p !== undefined);
}

/** Every group to watch: those hermit started and those that escaped from them. */
export function activeGroups(): number[] {
  return [...groupIds(), ...escaped.keys()];
}

/** A child the runtime started that is not a group (the watchdog), while it runs. */
export function noteRuntimeChild(pid: number, running: boolean): void {
  if (running) runtimeChildren.add(pid);
  else runtimeChildren.delete(pid);
}

/**
 * Keep escapes in reach from now on: search at each stop and, where hermit can become a child
 * subreaper (Linux), every ESCAPE_POLL_MS. Only for a process whose every child is a group or
 * noted with `noteRuntimeChild`: any other child counts as an adopted orphan.
 */
export function trackEscapes(): void {
  if (escapesOn || process.platform === "win32") return;
  escapesOn = true;
  if (!becomeSubreaper()) return;
  escapePoll = setInterval(sweepEscapes, ESCAPE_POLL_MS);
  (escapePoll as { unref?: () => void }).unref?.();
}

/**
 * Stop following escapes (hermit has stopped its groups and stops watching): no longer a child
 * subreaper, so what is orphaned later goes to init as usual (this matters where hermit is a
 * library in a longer-lived process, such as a test runner).
 */
export function untrackEscapes(): void {
  if (!escapesOn) return;
  escapesOn = false;
  clearInterval(escapePoll);
  escapePoll = undefined;
  becomeSubreaper(false);
}

/** When each escape hermit adopted as an orphan (owner unknown) was first seen. */
const orphanSeen = new Map<number, number>();
/** How recent an orphan must be to be counted as the group's that has just ended. */
const CLAIM_MS = 2 * ESCAPE_POLL_MS;

/**
 * Search once: take new escapes, reap adopted orphans that exited, drop escapes that are gone.
 * `claimant`: a group whose leader has exited and that is being stopped. An orphan hermit adopted
 * since just before that (its lineage is gone with the leader) is counted as that group's, so a
 * tool's `setsid` daemon goes with the tool, not only with hermit.
 */
export function sweepEscapes(claimant?: number): void {
  if (!escapesOn) return;
  const rows = descendantRows(process.pid);
  const { escapes, zombies } = findEscapes(rows, {
    self: process.pid,
    ownPgid: readProcStat(process.pid)?.pgid,
    tracked: new Set(groupIds()),
    runtimeChildren,
  });
  zombies.forEach(reapAdopted);
  const now = Date.now();
  for (const e of escapes) {
    if (escaped.has(e.pgid)) continue;
    // an orphan: its environment may still name the group it came from
    const byTag = e.owner === undefined ? ownerByTag(e.pgid, rows) : undefined;
    const owner = e.owner ?? byTag;
    escaped.set(e.pgid, owner);
    if (owner === undefined) orphanSeen.set(e.pgid, now);
    log.debug(
      `group ${e.pgid} left ${
        owner === undefined
          ? "its group (orphaned)"
          : `group ${owner}${byTag ? " (orphaned; its environment names it)" : ""}`
      }; watching it too`,
    );
    trackGroup(e.pgid);
    for (const l of listeners) l("add", e.pgid);
  }
  if (claimant !== undefined) {
    for (const [pgid, seen] of orphanSeen) {
      if (escaped.get(pgid) === undefined && now - seen <= CLAIM_MS) escaped.set(pgid, claimant);
    }
  }
  const live = new Set(rows.filter((r) => !r.zombie).map((r) => r.pgid));
  for (const pgid of escaped.keys()) if (!live.has(pgid)) dropEscape(pgid);
}

export function dropEscape(pgid: number): void {
  orphanSeen.delete(pgid);
  if (!escaped.delete(pgid)) return;
  forgetGroup(pgid);
  for (const l of listeners) l("remove", pgid);
}

/** The escapes that left `owner`'s lineage (all of them when owner is undefined). */
export function escapesOf(owner: number | undefined): number[] {
  return [...escaped].filter(([, o]) => owner === undefined || o === owner).map(([g]) => g);
}

/** Escapes that joined a stop since the last call, given the groups it has signalled. */
export type Follow = (signalled: ReadonlySet<number>) => number[];

/**
 * A `Follow` for a stop of `owner`'s escapes (everything when undefined), to be made right before
 * its first signal: each call searches again, and the escapes that join (see `joiningStop`) are
 * counted as `owner`'s from then on.
 */
export function follower(owner: number | undefined): Follow {
  const before = new Set(escaped.keys());
  return (signalled) => {
    sweepEscapes();
    const join = joiningStop(escaped, { owner, before, signalled });
    if (owner !== undefined) { for (const g of join) escaped.set(g, owner); }
    return join;
  };
}

/**
 * SIGTERM every live group in `pgids`, wait up to `graceMs` for them to empty, SIGKILL what is
 * left and wait (briefly) for that too. With `follow`, search again every FOLLOW_MS and once more
 * when all is empty: what joins is signalled like the rest (SIGTERM during the grace period,
 * SIGKILL after it), until nothing is left or the deadline. Every group signalled, returned.
 */
export async function terminate(pgids: number[], graceMs: number, follow?: Follow): Promise<number[]> {
  const signalled = new Set(pgids);
  let live = pgids.filter(groupAlive);
  live.forEach((g) => signalGroup(g, "SIGTERM"));
  const graceEnd = Date.now() + graceMs;
  const end = graceEnd + KILL_WAIT_MS;
  let killed = false;
  let nextFollow = Date.now() + FOLLOW_MS;
  const join = (): number => {
    nextFollow = Date.now() + FOLLOW_MS;
    const joined = follow?.(signalled) ?? [];
    for (const g of joined) {
      signalled.add(g);
      live.push(g);
      signalGroup(g, killed ? "SIGKILL" : "SIGTERM");
    }
    return joined.length;
  };
  for (;;) {
    live = live.filter(groupAlive);
    // empty: search again, for the child a group's last process left as it exited (and again
    // while that finds some: a group that joins may empty at once)
    if (!live.length && join() && Date.now() < end) continue;
    if (!live.length || Date.now() >= end) break;
    if (!killed && Date.now() >= graceEnd) {
      killed = true;
      live.forEach((g) => signalGroup(g, "SIGKILL"));
    }
    await sleep(25);
    if (Date.now() >= nextFollow) join();
  }
  return [...signalled];
}

/** Stop the escapes that left `owner` (all when undefined), after one more search. */
export async function stopEscapes(owner: number | undefined, graceMs: number): Promise<void> {
  sweepEscapes(owner);
  const pgids = escapesOf(owner);
  if (!pgids.length) return;
  const signalled = await terminate(pgids, graceMs, follower(owner));
  signalled.forEach(dropEscape);
  sweepEscapes(); // reap what was adopted and has now exited
}
