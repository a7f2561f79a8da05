/**
 * Memory given back when a long-lived process goes quiet. A `hermit serve` session is idle most
 * of its life, yet after a burst of calls Bun keeps what JavaScriptCore's JIT compiled for it, the
 * profiling data behind that code, and heap pages that held garbage: about a quarter of a serve's
 * own (anonymous) memory, growing with the session's length. After `idleMs` with no message
 * either way, one full collection and a drop of the compiled code (`Bun.shrink`) return it; the
 * next calls are interpreted until they are hot again (measured: the first call after a release
 * takes 4–5 ms more, and the release and the recompiling about 40 ms of CPU). So the default
 * quiet time is longer than a model's turn between tool calls usually is: a session in use keeps
 * its compiled code, one left open gives it back. Once per quiet spell: a process that stays
 * quiet is not woken again.
 *
 * The decision is a pure step over (last activity, released?) and the clock is injected, as the
 * watchdog's; `idleReleaseMs` reads the setting (HERMIT_IDLE_RELEASE, seconds, 0 = never).
 */

import process from "node:process";
import { log } from "../log.ts";
import { type Clock, realClock } from "./clock.ts";
import { releaseMemory } from "./gc.ts";

/** Seconds of quiet before memory is given back, unless HERMIT_IDLE_RELEASE says otherwise. */
export const DEFAULT_IDLE_RELEASE_SECONDS = 30;

/** The quiet time in ms, or undefined when releasing is off (`0`); a value that is not a number is the default. */
export function idleReleaseMs(env: Readonly<Record<string, string | undefined>>): number | undefined {
  const raw = env.HERMIT_IDLE_RELEASE?.trim();
  const s = raw === undefined || raw === "" ? NaN : Number(raw);
  const seconds = Number.isFinite(s) && s >= 0 ? s : DEFAULT_IDLE_RELEASE_SECONDS;
  return seconds === 0 ? undefined : Math.max(1, Math.round(seconds * 1000));
}

export interface IdleState {
  /** When the last message passed. */
  last: number;
  /** Memory was given back since then. */
  released: boolean;
}

/** What to do when the timer fires at `now`: give memory back, wait `ms` more, or nothing (already done). */
export type IdleStep = { kind: "release" } | { kind: "wait"; ms: number } | { kind: "none" };

export function idleStep(state: IdleState, now: number, idleMs: number): IdleStep {
  if (state.released) return { kind: "none" };
  const quiet = now - state.last;
  return quiet >= idleMs ? { kind: "release" } : { kind: "wait", ms: idleMs - quiet };
}

export interface IdleRelease {
  /** A message passed: the quiet spell starts again. Cheap enough for every message. */
  touch(): void;
  /** No more releases (the session ends). */
  stop(): void;
}

/**
 * Calls `release` once after every quiet spell of `idleMs`, the first counted from now (start-up
 * leaves garbage too). One timer at most: `touch` only notes the time, the timer looks again
 * when it fires.
 */
export function idleRelease(idleMs: number, release: () => void, clock: Clock = realClock): IdleRelease {
  const state: IdleState = { last: clock.now(), released: false };
  let armed = false;
  let stopped = false;
  const arm = (ms: number) => {
    armed = true;
    clock.setTimeout(fire, ms);
  };
  const fire = () => {
    armed = false;
    if (stopped) return;
    const step = idleStep(state, clock.now(), idleMs);
    if (step.kind === "wait") arm(step.ms);
    else if (step.kind === "release") {
      state.released = true;
      release();
    }
  };
  arm(idleMs);
  return {
    touch: () => {
      state.last = clock.now();
      state.released = false;
      if (!armed && !stopped) arm(idleMs);
    },
    stop: () => {
      stopped = true;
    },
  };
}

/**
 * The idle release of a serve or a service, per HERMIT_IDLE_RELEASE (undefined when it is off):
 * each release is logged at debug with the resident size it started from.
 */
export function releaseWhenIdle(env: Readonly<Record<string, string | undefined>>): IdleRelease | undefined {
  const ms = idleReleaseMs(env);
  if (ms === undefined) return undefined;
  return idleRelease(ms, () => {
    const rss = process.memoryUsage().rss;
    if (releaseMemory()) {
      log.debug(
        `quiet for ${ms / 1000} s: memory given back (full collection, compiled code dropped; resident ${
          (rss / 2 ** 20).toFixed(1)
        } MiB before)`,
      );
    }
  });
}
