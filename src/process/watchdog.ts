/**
 * The watchdog's decisions, as a pure state machine: which process groups it owns, when their
 * parent is gone, and when SIGTERM turns into SIGKILL. `watchdog_run.ts` feeds it events from the
 * real world (polls, stdin, signals) and carries out its actions.
 *
 *   watching ──parent-gone | signal | command-exited──▶ terminating (SIGTERM to every group)
 *   terminating ──tick: no group left alive, or the last one unregistered──▶ done (exit)
 *   terminating ──tick at termAt + graceMs with groups alive──▶ done (SIGKILL them, exit)
 *
 * A group registered while terminating gets SIGTERM at once (the grace period is not restarted).
 * Ticks also forget groups that died on their own, so a reused group id is never signalled.
 * Group ids ≤ 1 are never taken. `done` is absorbing.
 */

export interface WatchdogConfig {
  /** From SIGTERM to SIGKILL. */
  graceMs: number;
}

export type WatchdogPhase = "watching" | "terminating" | "done";

export interface WatchdogState {
  phase: WatchdogPhase;
  groups: ReadonlySet<number>;
  /** When SIGTERM went out. */
  termAt?: number;
  reason?: string;
}

/** `tick.alive`: which of the owned groups still have a live process. */
export type WatchdogEvent =
  | { type: "register"; pgid: number }
  | { type: "unregister"; pgid: number }
  | { type: "parent-gone"; now: number; reason: string }
  | { type: "signal"; now: number; signal: string }
  | { type: "command-exited"; now: number }
  | { type: "tick"; now: number; alive: ReadonlySet<number> };

export type WatchdogAction =
  | { type: "signal"; pgid: number; signal: "SIGTERM" | "SIGKILL" }
  | { type: "exit"; reason: string };

export const initialState: WatchdogState = { phase: "watching", groups: new Set() };

/** One event in, the next state and what to do now out. Never mutates `state`. */
export function step(
  state: WatchdogState,
  event: WatchdogEvent,
  config: WatchdogConfig,
): { state: WatchdogState; actions: WatchdogAction[] } {
  if (state.phase === "done") return { state, actions: [] };
  switch (event.type) {
    case "register": {
      if (!validGroup(event.pgid) || state.groups.has(event.pgid)) return { state, actions: [] };
      const groups = new Set(state.groups).add(event.pgid);
      // A group that arrives while we are already stopping is stopped at once.
      const actions: WatchdogAction[] = state.phase === "terminating"
        ? [{ type: "signal", pgid: event.pgid, signal: "SIGTERM" }]
        : [];
      return { state: { ...state, groups }, actions };
    }
    case "unregister": {
      if (!state.groups.has(event.pgid)) return { state, actions: [] };
      const groups = new Set(state.groups);
      groups.delete(event.pgid);
      return settle({ ...state, groups });
    }
    case "parent-gone":
    case "command-exited":
    case "signal": {
      if (state.phase !== "watching") return { state, actions: [] };
      const reason = event.type === "parent-gone"
        ? event.reason
        : event.type === "signal"
        ? `received ${event.signal}`
        : "command exited";
      const actions: WatchdogAction[] = [...state.groups].map((pgid) => ({
        type: "signal",
        pgid,
        signal: "SIGTERM",
      }));
      return settle({ ...state, phase: "terminating", termAt: event.now, reason }, actions);
    }
    case "tick": {
      const groups = new Set([...state.groups].filter((g) => event.alive.has(g)));
      const next = { ...state, groups };
      if (state.phase === "watching") return { state: next, actions: [] };
      if (groups.size > 0 && event.now - (state.termAt ?? event.now) >= config.graceMs) {
        const kills: WatchdogAction[] = [...groups].map((pgid) => ({
          type: "signal",
          pgid,
          signal: "SIGKILL",
        }));
        return {
          state: { ...next, phase: "done", groups: new Set() },
          actions: [...kills, { type: "exit", reason: next.reason ?? "" }],
        };
      }
      return settle(next);
    }
  }
}

/** Group 0 means "my own group" to kill(2) and 1 is init's: never ours to signal. */
function validGroup(pgid: number): boolean {
  return Number.isSafeInteger(pgid) && pgid > 1;
}

/** While terminating, an empty group set means the work is done. */
function settle(
  state: WatchdogState,
  actions: WatchdogAction[] = [],
): { state: WatchdogState; actions: WatchdogAction[] } {
  if (state.phase === "terminating" && state.groups.size === 0) {
    return {
      state: { ...state, phase: "done" },
      actions: [...actions, { type: "exit", reason: state.reason ?? "" }],
    };
  }
  return { state, actions };
}
