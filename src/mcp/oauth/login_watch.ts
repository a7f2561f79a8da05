/**
 * An upstream that failed with `NeedsLogin` waits for a login without waiting out its cooldown:
 * this watch remembers the stored login's stamp at the failure, says when it changed (so the
 * next connect attempt goes ahead at once) and polls for that change, so that a long-lived
 * process (the standalone service, a host's session) connects as soon as `hermit login` is done.
 */
import type { Clock } from "../../platform/clock.ts";

/** How often a waiting upstream looks for a new login. */
export const LOGIN_POLL_MS = 2000;

export class LoginWatch {
  readonly #clock: Clock;
  readonly #stamp: () => string | undefined;
  readonly #onLogin: () => void;
  #armed: { stamp: string | undefined; timer: unknown } | undefined;

  /** `stamp` reads the stored login's current stamp (undefined: not an OAuth upstream). */
  constructor(clock: Clock, stamp: () => string | undefined, onLogin: () => void) {
    this.#clock = clock;
    this.#stamp = stamp;
    this.#onLogin = onLogin;
  }

  /** True between a `NeedsLogin` failure and the next success, failure or stop. */
  get waiting(): boolean {
    return this.#armed !== undefined;
  }

  /** Waiting, and the stored login changed since the failure. */
  changed(): boolean {
    const a = this.#armed;
    return !!a && a.stamp !== undefined && this.#stamp() !== a.stamp;
  }

  /** Start waiting: `onLogin` runs once when the stored login changes. */
  arm(): void {
    this.stop();
    const tick = () => {
      if (!this.#armed) return;
      if (!this.changed()) {
        this.#armed.timer = this.#clock.setTimeout(tick, LOGIN_POLL_MS);
        return;
      }
      this.#armed.timer = undefined;
      this.#onLogin();
    };
    this.#armed = { stamp: this.#stamp(), timer: this.#clock.setTimeout(tick, LOGIN_POLL_MS) };
  }

  stop(): void {
    if (this.#armed?.timer !== undefined) this.#clock.clearTimeout(this.#armed.timer);
    this.#armed = undefined;
  }
}
