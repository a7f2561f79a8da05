/**
 * The watchdog's decisions, as a pure state machine: which process groups it owns, when their
 * parent is gone, and when SIGTERM turns into SIGKILL. `watchdog_run.ts` feeds it events from the
 * real world (polls, stdin, signals) and carries out its actions.
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

export function step(
  state: WatchdogState,
  event: WatchdogEvent,
  config: WatchdogConfig,
): { state: WatchdogState; actions: WatchdogAction[] } {
  if (state.phase === "done") return { state, actions: [] };
  switch (event.type) {
    case "register": {
      if (event.pgid <= 1 || state.groups.has(event.pgid)) return { state, actions: [] };
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
