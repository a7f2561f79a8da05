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
