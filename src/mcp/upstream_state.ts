/**
 * An upstream connection's life as a pure state machine; `upstream.ts` feeds it events (a connect
 * attempt starting, opening, failing; the live connection lost; a recycle or a retry coming due;
 * a stop) and `upstream_driver.ts` carries out its actions.
 *
 *   idle | cooldown (past retryAfter) | recycled ──connect──▶ connecting
 *   reconnecting ──connect──▶ reconnecting
 *   connecting | reconnecting ──opened──▶ connected
 *   connecting ──failed──▶ cooldown (retryAfter = now + min(30·2^(n-1), 600) s)
 *   reconnecting ──failed──▶ reconnecting (retry after backoff) or, after 5, cooldown
 *   any ──failed(refused)──▶ stopped (the config itself was refused: never retried)
 *   connected ──lost──▶ reconnecting (the dropped connection closed, a retry scheduled)
 *   connected ──recycle──▶ recycled (closed; the next call starts it again)
 *   any ──stop──▶ stopped, absorbing
 *
 * Every attempt carries the epoch it started in, and a stop starts a new one: an attempt that
 * opens or fails in an epoch not its own (stopped meanwhile, or superseded) changes nothing but
 * closes what it opened. So a stopped upstream stays stopped, with no timer armed.
 */
import { cooldownSeconds } from "./upstream_lifecycle.ts";

export type UpstreamState =
  | "idle"
  | "connecting"
  | "connected"
  | "reconnecting"
  | "cooldown"
  | "recycled"
  | "stopped";

/** Reconnect attempts after a lost connection before the upstream cools down. */
export const MAX_RECONNECTS = 5;

export interface Life {
  state: UpstreamState;
  /** Bumped by each attempt and by stop; an attempt's outcome counts only in its own epoch. */
  epoch: number;
  /** Consecutive failed attempts (the cooldown grows with them). */
  failures: number;
  /** No new attempt before this (clock ms), in cooldown. */
  retryAfter: number;
  /** Which reconnect attempt of a series is next (0: no series running). */
  reconnect: number;
  lastError?: string;
  /** Why the config was refused (screening, right before the spawn): never retried. */
  refusal?: string;
}

export type FailureKind = "error" | "needs-login" | "refused";

export type LifeEvent =
  | { type: "connect" }
  | { type: "opened"; epoch: number }
  | { type: "failed"; epoch: number; now: number; error: string; kind: FailureKind }
  | { type: "lost" }
  | { type: "retry-due" }
  | { type: "recycle" }
  | { type: "stop" };

export type LifeAction =
  /** Close the connection this attempt opened: it is not wanted (stopped or superseded). */
  | { type: "discard-attempt" }
  /** Make the attempt's connection the live one and arm its timers. */
  | { type: "go-live" }
  /** Close the live connection (dropped, recycled or stopped) and disarm its timers. */
  | { type: "close-live" }
  /** Wait the jittered backoff for reconnect attempt `attempt`, then send `retry-due`. */
  | { type: "schedule-retry"; attempt: number }
  /** Start a connect attempt now. */
  | { type: "connect" }
  /** Start waiting for a new stored login (an OAuth upstream that needs one). */
  | { type: "await-login" };

export const initialLife: Life = { state: "idle", epoch: 0, failures: 0, retryAfter: 0, reconnect: 0 };

/** One event in, the next life and what to do now out. Never mutates `life`. */
export function step(life: Life, event: LifeEvent): { life: Life; actions: LifeAction[] } {
  const none = { life, actions: [] as LifeAction[] };
  if (life.state === "stopped") {
    return event.type === "opened" && event.epoch !== life.epoch
      ? { life, actions: [{ type: "discard-attempt" }] }
      : none;
  }
  switch (event.type) {
    case "connect": {
      const state = life.state === "reconnecting" ? "reconnecting" : "connecting";
      return { life: { ...life, state, epoch: life.epoch + 1 }, actions: [] };
    }
    case "opened":
      if (event.epoch !== life.epoch) return { life, actions: [{ type: "discard-attempt" }] };
      return {
        life: { ...life, state: "connected", failures: 0, reconnect: 0, lastError: undefined },
        actions: [{ type: "go-live" }],
      };
    case "failed": {
      if (event.epoch !== life.epoch) return none;
      if (event.kind === "refused") {
        return {
          life: { ...life, state: "stopped", lastError: event.error, refusal: event.error },
          actions: [],
        };
      }
      const failures = life.failures + 1;
      const failed = {
        ...life,
        failures,
        lastError: event.error,
        retryAfter: event.now + cooldownSeconds(failures) * 1000,
      };
      if (event.kind === "needs-login") {
        return { life: { ...failed, state: "cooldown", reconnect: 0 }, actions: [{ type: "await-login" }] };
      }
      if (life.state === "reconnecting" && life.reconnect < MAX_RECONNECTS) {
        const attempt = life.reconnect + 1;
        return { life: { ...failed, reconnect: attempt }, actions: [{ type: "schedule-retry", attempt }] };
      }
      return { life: { ...failed, state: "cooldown", reconnect: 0 }, actions: [] };
    }
    case "lost":
      if (life.state !== "connected") return none;
      return {
        life: { ...life, state: "reconnecting", reconnect: 1 },
        actions: [{ type: "close-live" }, { type: "schedule-retry", attempt: 1 }],
      };
    case "retry-due":
      return life.state === "reconnecting" ? { life, actions: [{ type: "connect" }] } : none;
    case "recycle":
      if (life.state !== "connected") return none;
      return { life: { ...life, state: "recycled" }, actions: [{ type: "close-live" }] };
    case "stop":
      return {
        life: { ...life, state: "stopped", epoch: life.epoch + 1, reconnect: 0 },
        actions: [{ type: "close-live" }, { type: "discard-attempt" }],
      };
  }
}

/** Whether a call may start a connect attempt now, and if not, why. */
export type Admission =
  | { go: true }
  | { go: false; why: "stopped" }
  | { go: false; why: "needs-login" }
  | { go: false; why: "cooldown"; retryInSeconds: number };

/** `loginChanged`: a stored login appeared since a `needs-login` failure (go at once). */
export function admit(life: Life, now: number, login: { waiting: boolean; changed: boolean }): Admission {
  if (life.state === "stopped") return { go: false, why: "stopped" };
  if (life.state !== "cooldown" || now >= life.retryAfter || login.changed) return { go: true };
  if (login.waiting) return { go: false, why: "needs-login" };
  return { go: false, why: "cooldown", retryInSeconds: Math.ceil((life.retryAfter - now) / 1000) };
}

/** The life's part of an upstream's status (for `status`, `/health` and why a tool is missing). */
export function lifeStatus(life: Life, now: number) {
  return {
    state: life.state,
    failures: life.failures,
    retryInSeconds: life.state === "cooldown"
      ? Math.max(0, Math.ceil((life.retryAfter - now) / 1000))
      : undefined,
    lastError: life.lastError,
    refused: life.refusal !== undefined || undefined,
  };
}
