/**
 * Children in their own process group. Every process hermit starts goes through `spawnInGroup`,
 * which records the group so it can be stopped (stdin close, SIGTERM to the group, a grace period,
 * SIGKILL) when hermit stops, and so the watchdog can reap it if hermit is killed outright. A
 * group is dropped once nothing is left in it (checked when the leader exits, then every
 * ORPHAN_POLL_MS while what it left behind runs), and a dropped group is never signalled again:
 * its id may since belong to someone else.
 * A process that leaves its group (a `setsid` daemon) is an escape (`escapes.ts`): once
 * `trackEscapes()` runs (Linux: hermit becomes a child subreaper and looks every ESCAPE_POLL_MS),
 * each escaped group is registered like a group, stopped with the group whose lineage it left (on
 * a timeout or cancel too), and with everything else when hermit stops. A stop also looks once
 * more, right before its signals (the only look on systems without a subreaper).
 * On Windows the "group" is the child's process tree (see `platform/proc.ts`), and a batch file
 * (`npx.cmd`) is started through cmd.exe with escaped arguments (see `platform/win_cmd.ts`).
 */
import { type ChildProcess, spawn, type StdioOptions } from "node:child_process";
import { EventEmitter } from "node:events";
import process from "node:process";
import { PassThrough } from "node:stream";
import { log } from "../log.ts";
import { forgetGroup, groupAlive, readProcStat, signalGroup, trackGroup } from "../platform/proc.ts";
import { comspecOf, windowsSpawnPlan } from "../platform/win_cmd.ts";
import { becomeSubreaper, descendantRows, findEscapes, reapAdopted } from "./escapes.ts";
import { type ExitStatus, exitStatusOf, spawnErrorStatus } from "./exit_status.ts";
import { sleep, within } from "./wait.ts";

/** From SIGTERM to SIGKILL, for hermit's own stops and the watchdog's. */
export const DEFAULT_GRACE_MS = 3000;
/** How often a group whose leader has exited is checked for what it left running. */
const ORPHAN_POLL_MS = 1000;
/** How often hermit's subtree is searched for escapes, once `trackEscapes()` has run (Linux). */
const ESCAPE_POLL_MS = 1000;

export interface GroupSpawnOptions {
  cwd?: string;
  env: Record<string, string>;
  stdio?: StdioOptions;
}

type Listener = (event: "add" | "remove", pgid: number) => void;
const listeners = new Set<Listener>();
const groups = new Set<ProcessGroup>();
/** Escaped groups: pgid → the group whose lineage it left (undefined: an adopted orphan). */
const escaped = new Map<number, number | undefined>();
/** Children the runtime started outside any group (the watchdog): never reaped or searched here. */
const runtimeChildren = new Set<number>();
let escapesOn = false;
let escapePoll: ReturnType<typeof setInterval> | undefined;

/** Be told when a group starts or is gone (the watchdog supervisor client listens). */
export function onGroupChange(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
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
function sweepEscapes(claimant?: number): void {
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
    escaped.set(e.pgid, e.owner);
    if (e.owner === undefined) orphanSeen.set(e.pgid, now);
    log.debug(
      `group ${e.pgid} left ${e.owner ? `group ${e.owner}` : "its group (orphaned)"}; watching it too`,
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

function dropEscape(pgid: number): void {
  orphanSeen.delete(pgid);
  if (!escaped.delete(pgid)) return;
  forgetGroup(pgid);
  for (const l of listeners) l("remove", pgid);
}

/** The escapes that left `owner`'s lineage (all of them when owner is undefined). */
function escapesOf(owner: number | undefined): number[] {
  return [...escaped].filter(([, o]) => owner === undefined || o === owner).map(([g]) => g);
}

/**
 * SIGTERM every live group in `pgids`, wait up to `graceMs` for them to empty, SIGKILL what is
 * left and wait (briefly) for that too.
 */
async function terminate(pgids: number[], graceMs: number): Promise<void> {
  let live = pgids.filter(groupAlive);
  live.forEach((g) => signalGroup(g, "SIGTERM"));
  const deadline = Date.now() + graceMs;
  while (live.length && Date.now() < deadline) {
    await sleep(25);
    live = live.filter(groupAlive);
  }
  if (!live.length) return;
  live.forEach((g) => signalGroup(g, "SIGKILL"));
  const killDeadline = Date.now() + 2000;
  while (live.length && Date.now() < killDeadline) {
    await sleep(25);
    live = live.filter(groupAlive);
  }
}

/** Stop the escapes that left `owner` (all when undefined), after one more search. */
async function stopEscapes(owner: number | undefined, graceMs: number): Promise<void> {
  sweepEscapes(owner);
  const pgids = escapesOf(owner);
  if (!pgids.length) return;
  await terminate(pgids, graceMs);
  pgids.forEach(dropEscape);
  sweepEscapes(); // reap what was adopted and has now exited
}

/** Stop every group hermit started, in parallel, then whatever escaped from them. */
export async function stopAllGroups(graceMs = DEFAULT_GRACE_MS): Promise<void> {
  await Promise.all([...groups].map((g) => g.stop({ graceMs })));
  await stopEscapes(undefined, graceMs);
}

export class ProcessGroup {
  readonly child: ChildProcess;
  readonly command: string;
  /** The group id: the leader's pid (undefined when the spawn failed). */
  readonly pgid: number | undefined;
  /** Resolves when the leader has exited (or could not start). */
  readonly exited: Promise<ExitStatus>;
  #status: ExitStatus | undefined;
  #stopping: Promise<ExitStatus> | undefined;
  #orphanPoll: ReturnType<typeof setInterval> | undefined;

  constructor(command: string, args: string[], opts: GroupSpawnOptions) {
    this.command = command;
    const windows = process.platform === "win32";
    const stdio = opts.stdio ?? ["pipe", "pipe", "pipe"];
    try {
      const plan = windows
        ? windowsSpawnPlan(command, args, comspecOf(opts.env))
        : { file: command, args, verbatim: false };
      this.child = spawn(plan.file, plan.args, {
        cwd: opts.cwd,
        env: opts.env,
        stdio,
        detached: !windows,
        windowsHide: true,
        windowsVerbatimArguments: plan.verbatim,
      });
    } catch (err) {
      this.child = unstartedChild(err, stdio);
    }
    this.pgid = this.child.pid;
    if (this.pgid !== undefined) trackGroup(this.pgid);
    this.exited = new Promise<ExitStatus>((resolve) => {
      // 'error' also reports failed kill()s and messages; only one without a pid is a spawn failure.
      this.child.on("error", (err) => {
        if (this.child.pid !== undefined) return;
        this.#finish(spawnErrorStatus(command, err as NodeJS.ErrnoException));
        resolve(this.#status!);
      });
      this.child.once("exit", (code, signal) => {
        this.#finish(exitStatusOf(code, signal));
        resolve(this.#status!);
      });
    });
    if (this.pgid !== undefined) {
      // escapes of an earlier group with this (reused) id now belong to hermit as a whole
      for (const [g, owner] of escaped) if (owner === this.pgid) escaped.set(g, undefined);
      groups.add(this);
      for (const l of listeners) l("add", this.pgid);
    }
  }

  get running(): boolean {
    return this.#status === undefined;
  }

  get status(): ExitStatus | undefined {
    return this.#status;
  }

  #finish(status: ExitStatus): void {
    if (this.#status) return;
    this.#status = status;
    const pgid = this.pgid;
    if (pgid === undefined || !groups.has(this)) return;
    if (!groupAlive(pgid)) {
      this.#forget();
      return;
    }
    // The leader is gone but descendants hold the group: drop it when they are gone too (or when
    // stop() has reaped them).
    if (this.#stopping) return;
    this.#orphanPoll = setInterval(() => {
      if (!groupAlive(pgid)) this.#forget();
    }, ORPHAN_POLL_MS);
    (this.#orphanPoll as { unref?: () => void }).unref?.();
  }

  #forget(): void {
    clearInterval(this.#orphanPoll);
    if (this.pgid === undefined || !groups.delete(this)) return;
    forgetGroup(this.pgid);
    for (const l of listeners) l("remove", this.pgid);
  }

  /**
   * Stop the whole group: close stdin and give the leader `stdinMs` to leave on its own, then
   * SIGTERM the group, wait up to `graceMs`, then SIGKILL whatever is left.
   */
  stop(opts: { graceMs?: number; stdinMs?: number } = {}): Promise<ExitStatus> {
    this.#stopping ??= this.#stop(opts.graceMs ?? DEFAULT_GRACE_MS, opts.stdinMs ?? 0);
    return this.#stopping;
  }

  async #stop(graceMs: number, stdinMs: number): Promise<ExitStatus> {
    const pgid = this.pgid;
    if (pgid === undefined) return this.exited; // never started
    // already dropped as empty: nothing of the group is left to signal, but what escaped from it is
    if (!groups.has(this)) {
      await stopEscapes(pgid, graceMs);
      return this.exited;
    }
    clearInterval(this.#orphanPoll);
    try {
      this.child.stdin?.end();
    } catch {
      // already closed
    }
    if (stdinMs > 0 && this.running) await within(this.exited, stdinMs);
    // the lineage as it stands, before the signals break it up (its leader gone: the orphans it left)
    sweepEscapes(this.running ? undefined : pgid);
    const owned = escapesOf(pgid);
    await terminate(groups.has(this) ? [pgid, ...owned] : owned, graceMs);
    owned.forEach(dropEscape);
    const status = await within(this.exited, 2000);
    this.#forget();
    return status ?? this.#status ?? exitStatusOf(null, "SIGKILL");
  }
}

/**
 * Bun's spawn() throws for some failures (ENOEXEC, ENOTDIR) that Node and Deno report with an
 * 'error' event. This stand-in reports them the same way: no pid, ended output streams, a stdin
 * that swallows writes, and the error emitted on the next tick.
 */
function unstartedChild(err: unknown, stdio: StdioOptions): ChildProcess {
  const modes = typeof stdio === "string" ? [stdio, stdio, stdio] : stdio;
  const stream = (i: number) => {
    if ((modes[i] ?? "pipe") !== "pipe") return null;
    const s = new PassThrough();
    if (i > 0) s.end();
    else s.resume();
    return s;
  };
  const streams = [stream(0), stream(1), stream(2)];
  const child = Object.assign(new EventEmitter(), {
    pid: undefined,
    exitCode: null,
    signalCode: null,
    killed: false,
    stdin: streams[0],
    stdout: streams[1],
    stderr: streams[2],
    stdio: streams,
    kill: () => false,
  });
  process.nextTick(() => child.emit("error", err));
  return child as unknown as ChildProcess;
}

export function spawnInGroup(command: string, args: string[], opts: GroupSpawnOptions): ProcessGroup {
  return new ProcessGroup(command, args, opts);
}
