/**
 * Is the process a watchdog (or a stdio session) watches still there? `parentGoneReason` decides
 * from facts; `watchParent` reads those facts for it. On POSIX, when the watched process is our own parent, the answer is our ppid: it changes (to
 * init or a subreaper) the moment the parent dies, and no pid reuse can fake it. Windows never
 * reparents (a child keeps naming its dead parent's pid), so there — and on POSIX for a process
 * that is not our parent — the watched process is identified by pid plus start time (its
 * creation time on Windows): gone when nothing runs under the pid, or something started at
 * another time does (the pid was reused).
 */
import process from "node:process";
import { isAlive, processStartTime } from "../platform/proc.ts";

export type ParentCheck = "ppid" | "identity";

export function parentCheck(platform: NodeJS.Platform, watched: number, ownPpid: number): ParentCheck {
  return platform !== "win32" && watched === ownPpid ? "ppid" : "identity";
}

export interface ParentFacts {
  check: ParentCheck;
  watched: number;
  /** Our ppid now (the "ppid" check). */
  ppidNow: number;
  /** Is anything running under the watched pid now? (the "identity" check) */
  alive: boolean;
  /** Start time of the watched process when watching began, and of whatever holds its pid now. */
  startThen?: string;
  startNow?: string;
}

/** Why the watched process counts as gone, or undefined while it is there. */
export function parentGoneReason(f: ParentFacts): string | undefined {
  if (f.check === "ppid") return f.ppidNow !== f.watched ? `parent ${f.watched} is gone` : undefined;
  if (!f.alive) return `parent ${f.watched} is gone`;
  if (f.startThen && f.startNow && f.startNow !== f.startThen) {
    return `parent ${f.watched} is gone (pid reused)`;
  }
  return undefined;
}

/**
 * Start watching process `watched` (normally our parent): the returned function says why it is
 * gone, or undefined while it is there. The start time is read first, as the liveness test too:
 * one lookup per poll where the platform has start times. A pid of 0 means no parent is known
 * (a Windows program started from outside Windows, e.g. under Wine): nothing to watch.
 */
export function watchParent(watched: number): () => string | undefined {
  if (!Number.isInteger(watched) || watched <= 0) return () => undefined;
  const check = parentCheck(process.platform, watched, process.ppid);
  const startThen = check === "identity" ? processStartTime(watched) : undefined;
  return () => {
    if (check === "ppid") return parentGoneReason({ check, watched, ppidNow: process.ppid, alive: true });
    const startNow = processStartTime(watched);
    const alive = startNow !== undefined || isAlive(watched);
    return parentGoneReason({ check, watched, ppidNow: process.ppid, alive, startThen, startNow });
  };
}

/** The signals that ask a process to stop (a host's shutdown, Ctrl-C, a closed terminal). */
export const STOP_SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP"] as const;

/** What ends a stdio process from outside: a signal, or its host (our parent) gone. */
export type HostEnd =
  | { cause: "signal"; signal: NodeJS.Signals; text: string }
  | { cause: "host-gone"; text: string };

/**
 * Resolves with the first SIGTERM, SIGINT or SIGHUP, or the host's death (our parent, checked
 * every `pollMs` by `watchParent`). It keeps listening until `stop`, whatever else ended the
 * session first: a host that closes stdin and then signals cuts the drain that follows. Each
 * signal is taken once (a second one ends the process as it would without hermit); the poll
 * stops at the first end, and keeps the process alive until then only with `keepAlive` (serve,
 * whose stdin alone might not).
 */
export function hostEnd(
  opts: { hostGone?: () => string | undefined; pollMs?: number; keepAlive?: boolean } = {},
): { ended: Promise<HostEnd>; stop(): void } {
  const gone = opts.hostGone ?? watchParent(process.ppid);
  const handlers = new Map<NodeJS.Signals, () => void>();
  let poll: ReturnType<typeof setInterval> | undefined;
  const stop = () => {
    clearInterval(poll);
    handlers.forEach((on, sig) => process.off(sig, on));
    handlers.clear();
  };
  const ended = new Promise<HostEnd>((resolve) => {
    const done = (end: HostEnd) => {
      clearInterval(poll);
      resolve(end);
    };
    poll = setInterval(() => {
      const why = gone();
      if (why) done({ cause: "host-gone", text: `the host process is gone (${why})` });
    }, opts.pollMs ?? 2000);
    if (!opts.keepAlive) (poll as { unref?: () => void }).unref?.();
    for (const signal of STOP_SIGNALS) {
      const on = () => {
        process.off(signal, on);
        handlers.delete(signal);
        done({ cause: "signal", signal, text: `received ${signal}` });
      };
      handlers.set(signal, on);
      process.on(signal, on);
    }
  });
  return { ended, stop };
}
