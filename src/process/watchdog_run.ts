/**
 * The running watchdog (`hermit watchdog`). Two front-ends share one state machine:
 *  - command mode, `--ppid N -- CMD…`: run CMD in its own group with the watchdog's stdio (the
 *    watchdog never sits in the byte path); exit with CMD's status;
 *  - supervisor mode, `--ppid N --supervise`: own the groups a hermit process registers on our
 *    stdin (`register <pgid>` / `unregister <pgid>` lines). EOF on stdin means the parent died.
 * Either way, when the parent is gone (or a signal arrives) every owned group gets SIGTERM, then
 * SIGKILL after the grace period.
 */
import process from "node:process";
import { createInterface } from "node:readline";
import { log } from "../log.ts";
import { groupAlive, isAlive, processStartTime, signalGroup } from "../platform/proc.ts";
import type { ExitStatus } from "./exit_status.ts";
import { spawnInGroup } from "./group.ts";
import { initialState, step, type WatchdogEvent, type WatchdogState } from "./watchdog.ts";

export interface WatchdogOptions {
  ppid: number;
  /** Command mode when set; supervisor mode otherwise. */
  command?: string[];
  graceMs: number;
  pollMs: number;
}

const MAX_LINE = 256;

export function runWatchdog(opts: WatchdogOptions): Promise<number> {
  return new Promise<number>((resolve) => {
    let state: WatchdogState = initialState;
    let commandStatus: ExitStatus | undefined;
    let finished = false;
    const parentIsOurs = opts.ppid === process.ppid;
    const parentStart = processStartTime(opts.ppid);
    const timers: ReturnType<typeof setInterval>[] = [];

    const finish = (reason: string) => {
      if (finished) return;
      finished = true;
      timers.forEach(clearInterval);
      for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.removeListener(sig, onSignal);
      if (reason && reason !== "command exited") log.debug(`watchdog: done (${reason})`);
      resolve(commandStatus?.code ?? 0);
    };

    const feed = (event: WatchdogEvent) => {
      const prevPhase = state.phase;
      const out = step(state, event, { graceMs: opts.graceMs });
      state = out.state;
      if (prevPhase === "watching" && state.phase !== "watching" && state.reason !== "command exited") {
        log.warn(`watchdog: ${state.reason}; stopping ${out.actions.length} process group(s)`);
      }
      for (const a of out.actions) {
        if (a.type === "signal") signalGroup(a.pgid, a.signal);
        else finish(a.reason);
      }
      if (state.phase === "terminating" && timers.length < 2) {
        timers.push(setInterval(() => tick(), 50));
      }
    };

    const tick = () => {
      feed({ type: "tick", now: Date.now(), alive: new Set([...state.groups].filter(groupAlive)) });
    };

    const parentGone = (): string | undefined => {
      if (parentIsOurs) return process.ppid !== opts.ppid ? `parent ${opts.ppid} is gone` : undefined;
      if (!isAlive(opts.ppid)) return `parent ${opts.ppid} is gone`;
      const now = processStartTime(opts.ppid);
      if (parentStart && now && now !== parentStart) return `parent ${opts.ppid} is gone (pid reused)`;
      return undefined;
    };

    const poll = () => {
      const why = parentGone();
      if (why) feed({ type: "parent-gone", now: Date.now(), reason: why });
      else tick();
    };

    const onSignal = (signal: NodeJS.Signals) => feed({ type: "signal", now: Date.now(), signal });
    for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(sig, onSignal);

    timers.push(setInterval(poll, opts.pollMs));

    if (opts.command) {
      const [cmd, ...args] = opts.command;
      const child = spawnInGroup(cmd, args, { env: process.env as Record<string, string>, stdio: "inherit" });
      if (child.pgid !== undefined) feed({ type: "register", pgid: child.pgid });
      child.exited.then((status) => {
        commandStatus = status;
        if (status.code === 127 || status.code === 126) log.error(`watchdog: ${status.reason}`);
        feed({ type: "command-exited", now: Date.now() });
        tick();
      });
    } else {
      const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
      lines.on("line", (line) => {
        const m = /^(register|unregister) (\d+)$/.exec(line.slice(0, MAX_LINE).trim());
        if (!m) return;
        const pgid = Number(m[2]);
        if (m[1] === "unregister") feed({ type: "unregister", pgid });
        else if (pgid > 1 && pgid !== process.pid && pgid !== opts.ppid) feed({ type: "register", pgid });
      });
      lines.on("close", () => {
        // EOF: the hermit that fed us is gone, or is done and unregistered everything.
        if (state.groups.size === 0) finish("stdin closed");
        else feed({ type: "parent-gone", now: Date.now(), reason: `parent ${opts.ppid} closed the pipe` });
      });
    }

    const why = parentGone();
    if (why) feed({ type: "parent-gone", now: Date.now(), reason: why });
  });
}
