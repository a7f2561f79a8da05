/**
 * Children in their own process group. Every process hermit starts goes through `spawnInGroup`,
 * which registers the group (`group_registry.ts`) so it can be stopped (stdin close, SIGTERM to
 * the group, a grace period, SIGKILL) when hermit stops, and so the watchdog can reap it if hermit
 * is killed outright. A group is dropped once nothing is left in it (checked when the leader
 * exits, then every ORPHAN_POLL_MS while what it left behind runs), and a dropped group is never
 * signalled again: its id may since belong to someone else. Stopping a group also stops the
 * escapes (`setsid` daemons) that left its lineage; the registry follows them, and tells an orphan
 * whose lineage it never saw by the group's tag, which every child gets in its environment.
 * On Windows the "group" is the child's process tree (see `platform/proc.ts`), and a batch file
 * (`npx.cmd`) is started through cmd.exe with escaped arguments (see `platform/win_cmd.ts`).
 */
import { type ChildProcess, spawn, type StdioOptions } from "node:child_process";
import { EventEmitter } from "node:events";
import process from "node:process";
import { PassThrough } from "node:stream";
import { groupAlive, trackGroup } from "../platform/proc.ts";
import { comspecOf, windowsSpawnPlan } from "../platform/win_cmd.ts";
import { GROUP_TAG_ENV, GROUP_TAG_PREFIX } from "./escapes.ts";
import { type ExitStatus, exitStatusOf, spawnErrorStatus } from "./exit_status.ts";
import {
  dropEscape,
  escapesOf,
  follower,
  forgetTag,
  isRegistered,
  prepareGroup,
  registeredGroups,
  registerGroup,
  stopEscapes,
  sweepEscapes,
  terminate,
  unregisterGroup,
} from "./group_registry.ts";
import { within } from "./wait.ts";

/** From SIGTERM to SIGKILL, for hermit's own stops and the watchdog's. */
export const DEFAULT_GRACE_MS = 3000;
/** How often a group whose leader has exited is checked for what it left running. */
const ORPHAN_POLL_MS = 1000;
let groupsSpawned = 0;

export interface GroupSpawnOptions {
  cwd?: string;
  env: Record<string, string>;
  stdio?: StdioOptions;
}

/** Stop every group hermit started, in parallel, then whatever escaped from them. */
export async function stopAllGroups(graceMs = DEFAULT_GRACE_MS): Promise<void> {
  await Promise.all(registeredGroups().map((g) => g.stop({ graceMs })));
  await stopEscapes(undefined, graceMs);
}

export class ProcessGroup {
  readonly child: ChildProcess;
  readonly command: string;
  /** Unique to this group in this hermit; in its processes' environment as GROUP_TAG_ENV. */
  readonly tag = `${GROUP_TAG_PREFIX}.${++groupsSpawned}`;
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
    prepareGroup();
    try {
      const plan = windows
        ? windowsSpawnPlan(command, args, comspecOf(opts.env))
        : { file: command, args, verbatim: false };
      this.child = spawn(plan.file, plan.args, {
        cwd: opts.cwd,
        env: windows ? opts.env : { ...opts.env, [GROUP_TAG_ENV]: this.tag },
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
    registerGroup(this);
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
    if (pgid === undefined || !isRegistered(this)) return;
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
    unregisterGroup(this);
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
    if (!isRegistered(this)) {
      await stopEscapes(pgid, graceMs);
      forgetTag(this);
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
    const follow = follower(pgid); // and what escapes while it is being stopped
    const signalled = await terminate(isRegistered(this) ? [pgid, ...owned] : owned, graceMs, follow);
    signalled.filter((g) => g !== pgid).forEach(dropEscape);
    forgetTag(this);
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
