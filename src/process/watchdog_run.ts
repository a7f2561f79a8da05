/**
 * The running watchdog (`hermit watchdog`). Two front-ends share one state machine:
 *  - command mode, `--ppid N -- CMD…`: run CMD in its own group with the watchdog's stdio (the
 *    watchdog never sits in the byte path); exit with CMD's status;
 *  - supervisor mode, `--ppid N --supervise`: own the groups a hermit process registers on our
 *    stdin (`register <pgid>` / `unregister <pgid>` lines). EOF on stdin means the parent died.
 * Either way, when the parent is gone (or SIGTERM, SIGINT or SIGHUP arrives) every owned group
 * gets SIGTERM, then SIGKILL after the grace period. "Gone" (`parent.ts`): when N is our parent
 * on POSIX, our ppid changed (to init or a subreaper); otherwise (and always on Windows) N is dead
 * or its start time changed (pid reuse).
 * Polled every `pollMs`; while terminating, the groups are checked every 50 ms.
 */
import process from "node:process";
import { createInterface } from "node:readline";
import { log } from "../log.ts";
import { MAX_TIMER_MS } from "../platform/clock.ts";
import { aliveGroups, forgetGroup, signalGroup, trackGroup } from "../platform/proc.ts";
import { taggedGroups } from "./escapes.ts";
import type { ExitStatus } from "./exit_status.ts";
import { DEFAULT_GRACE_MS, spawnInGroup } from "./group.ts";
import { STOP_SIGNALS } from "./host_end.ts";
import { watchParent } from "./parent.ts";
import { within } from "./wait.ts";
import { initialState, step, type WatchdogEvent, type WatchdogState } from "./watchdog.ts";

/** The documented defaults: 3 s from SIGTERM to SIGKILL, the parent checked every 2 s. */
export const WATCHDOG_DEFAULTS = { graceMs: DEFAULT_GRACE_MS, pollMs: 2000 } as const;

export interface WatchdogOptions {
  ppid: number;
  /** Command mode when set; supervisor mode otherwise. */
  command?: string[];
  graceMs: number;
  pollMs: number;
  /** Supervisor mode: the prefix of hermit's group tags (`escapes.ts`), looked for at the end. */
  tag?: string;
}

const MAX_LINE = 256;
/** setInterval turns anything above MAX_TIMER_MS into 1 ms; below 10 ms polling just burns CPU. */
const MIN_POLL_MS = 10;
/** How long to wait, after the group is gone or SIGKILLed, for the runtime to report the exit. */
const EXIT_WAIT_MS = 2000;
/** While stopping, how often processes carrying hermit's group tag are looked for. */
const TAG_SCAN_MS = 1000;

export function runWatchdog(opts: WatchdogOptions): Promise<number> {
  return new Promise<number>((resolve) => {
    let state: WatchdogState = initialState;
    let commandStatus: ExitStatus | undefined;
    let finished = false;
    const parentGone = watchParent(opts.ppid);
    const timers: ReturnType<typeof setInterval>[] = [];
    let terminateTimerStarted = false;

    let commandExited: Promise<ExitStatus> | undefined;

    const finish = async (reason: string) => {
      if (finished) return;
      finished = true;
      timers.forEach(clearInterval);
      if (reason && reason !== "command exited") log.debug(`watchdog: done (${reason})`);
      // The group can look empty in /proc (or have just been sent SIGKILL) before the runtime has
      // reaped the leader: wait for its exit status, which is ours. (Signals meanwhile are
      // still handled, and ignored, rather than killing us with a wrong status.)
      const status = commandStatus ?? (commandExited && await within(commandExited, EXIT_WAIT_MS));
      for (const sig of STOP_SIGNALS) process.removeListener(sig, onSignal);
      resolve(status ? status.code : opts.command ? 128 + 9 : 0);
    };

    const feed = (event: WatchdogEvent) => {
      const prevPhase = state.phase;
      const out = step(state, event, { graceMs: opts.graceMs });
      state = out.state;
      if (prevPhase === "watching" && state.phase !== "watching" && state.reason !== "command exited") {
        const n = out.actions.filter((a) => a.type === "signal").length;
        log.warn(`watchdog: ${state.reason}; stopping ${n} process group(s)`);
      }
      for (const a of out.actions) {
        if (a.type === "signal") signalGroup(a.pgid, a.signal);
        else void finish(a.reason);
      }
      if (state.phase === "terminating" && !terminateTimerStarted) {
        terminateTimerStarted = true;
        timers.push(setInterval(() => tick(), 50));
      }
    };

    // when hermit is gone: the groups of processes that carry its tag are registered too, at once
    // and every TAG_SCAN_MS while stopping (what escaped before hermit could register it)
    let nextScan = 0;
    const addTagged = () => {
      if (!opts.tag || state.phase === "done" || Date.now() < nextScan) return;
      nextScan = Date.now() + TAG_SCAN_MS;
      for (const pgid of taggedGroups(opts.tag, state.groups)) {
        if (state.groups.has(pgid) || pgid === opts.ppid || pgid === process.pid) continue;
        log.debug(`watchdog: group ${pgid} carries its tag: stopping it too`);
        trackGroup(pgid);
        feed({ type: "register", pgid });
      }
    };
    // (the registered groups are signalled first: a scan of /proc can be slow under a fork storm)
    const stopAll = (reason: string) => {
      if (state.groups.size === 0) addTagged();
      feed({ type: "parent-gone", now: Date.now(), reason });
      addTagged();
    };

    const tick = () => {
      const before = state.groups;
      feed({ type: "tick", now: Date.now(), alive: aliveGroups(state.groups) });
      for (const g of before) if (!state.groups.has(g)) forgetGroup(g);
      if (state.phase === "terminating") addTagged();
    };

    const poll = () => {
      const why = parentGone();
      if (why) stopAll(why);
      else tick();
    };

    const onSignal = (signal: NodeJS.Signals) => feed({ type: "signal", now: Date.now(), signal });
    for (const sig of STOP_SIGNALS) process.on(sig, onSignal);

    timers.push(setInterval(poll, Math.min(Math.max(opts.pollMs, MIN_POLL_MS), MAX_TIMER_MS)));

    if (opts.command) {
      const [cmd, ...args] = opts.command;
      const child = spawnInGroup(cmd, args, { env: process.env as Record<string, string>, stdio: "inherit" });
      if (child.pgid !== undefined) feed({ type: "register", pgid: child.pgid });
      commandExited = child.exited;
      child.exited.then((status) => {
        commandStatus = status;
        if (child.pgid === undefined) log.error(`watchdog: ${status.reason}`);
        // Forget the group first if it is already empty, so its id (maybe reused by now) is never
        // signalled; what the command left running in it gets SIGTERM, then SIGKILL.
        tick();
        feed({ type: "command-exited", now: Date.now() });
      });
    } else {
      const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
      lines.on("line", (line) => {
        const m = /^(register|unregister) (\d{1,10})$/.exec(line.slice(0, MAX_LINE).trim());
        const pgid = Number(m?.[2]);
        if (m?.[1] === "unregister") {
          log.debug(`watchdog: no longer watching group ${pgid}`);
          feed({ type: "unregister", pgid });
        } else if (m && pgid > 1 && pgid !== process.pid && pgid !== opts.ppid) {
          log.debug(`watchdog: watching group ${pgid}`);
          trackGroup(pgid);
          feed({ type: "register", pgid });
        } else {
          log.debug(`watchdog: ignoring line '${line.slice(0, 40)}'`);
        }
      });
      lines.on("close", () => {
        // EOF: the hermit that fed us is gone, or is done and unregistered everything.
        addTagged();
        if (state.groups.size === 0) void finish("stdin closed");
        else stopAll(`parent ${opts.ppid} closed the pipe`);
      });
    }

    const why = parentGone();
    if (why) stopAll(why);
  });
}
