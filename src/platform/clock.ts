/**
 * Time, injectable so tests can run a fake clock (`tests/helpers/fake_clock.ts`): the one shape
 * the upstream timers, the relay, the login watch and the idle release take, and the real one.
 */

export interface Clock {
  now(): number;
  /** Run `fn` after `ms`; the real clock's timers do not keep the process alive. */
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The longest delay one timer takes (2^31 - 1 ms, about 24.8 days): past it, it fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A real timer (unreferenced); a longer delay (a `ttlMs` of a month) is waited in steps. */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const handle: { timer?: ReturnType<typeof setTimeout> } = {};
    const wait = (left: number) => {
      const step = Math.min(left, MAX_TIMER_MS);
      handle.timer = setTimeout(() => (left > step ? wait(left - step) : fn()), step);
      (handle.timer as { unref?: () => void }).unref?.();
    };
    wait(ms);
    return handle;
  },
  clearTimeout: (h) => clearTimeout((h as { timer?: ReturnType<typeof setTimeout> }).timer),
};
