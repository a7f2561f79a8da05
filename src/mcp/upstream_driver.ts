/**
 * The driver of an upstream's pure state machine (`upstream_state.ts`): it holds the life the
 * upstream is in and the two links the machine's actions are about — the one a connect attempt is
 * opening and the live one — and carries those actions out: discard an attempt's link, make it
 * live, close the live one, schedule a reconnect after the jittered backoff on the injected clock,
 * connect, wait for a login. What lies beyond the links (the timers of a live link, the login
 * watch, the connect itself) it asks of the connection that owns it.
 */
import type { Clock } from "../platform/clock.ts";
import { jitteredBackoff } from "./upstream_lifecycle.ts";
import type { Link } from "./upstream_client.ts";
import { initialLife, type Life, type LifeAction, type LifeEvent, step } from "./upstream_state.ts";

/** What the connection does when a link goes live or stops being live, and when it is to connect. */
export interface DriverHooks {
  /** A link went live (arm its timers, stop waiting for a login). */
  wentLive(): void;
  /** The live link is being closed (disarm its timers). */
  wentDown(): void;
  /** Start a connect attempt now. */
  connect(): void;
  /** Wait for a new stored login. */
  awaitLogin(): void;
}

export class LifeDriver {
  readonly #clock: Clock;
  readonly #hooks: DriverHooks;
  #life: Life = initialLife;
  /** The connected link, while `connected`. */
  #live: Link | undefined;
  /** The link an attempt is opening, until it goes live or is discarded. */
  #opening: Link | undefined;
  #retryTimer: unknown;

  constructor(clock: Clock, hooks: DriverHooks) {
    this.#clock = clock;
    this.#hooks = hooks;
  }

  get life(): Life {
    return this.#life;
  }

  get live(): Link | undefined {
    return this.#live;
  }

  /** A connect attempt is opening `link` (a stop closes it). */
  opening(link: Link): void {
    this.#opening = link;
  }

  /** The attempt that was opening `link` failed: it is not being opened any more. */
  abandoned(link: Link | undefined): void {
    if (this.#opening === link) this.#opening = undefined;
  }

  /** One event into the state machine; its actions carried out (`attempt`: the link it is about). */
  dispatch(event: LifeEvent, attempt?: Link): void {
    const { life, actions } = step(this.#life, event);
    this.#life = life;
    for (const a of actions) this.#act(a, attempt);
  }

  /** Stop for good: no retry stays armed; resolves when both links are closed. */
  async stop(): Promise<void> {
    const links = [this.#live, this.#opening];
    this.dispatch({ type: "stop" });
    this.#clearRetry();
    await Promise.all(links.map((l) => l?.close()));
  }

  #act(a: LifeAction, attempt: Link | undefined): void {
    switch (a.type) {
      case "discard-attempt": {
        const link = attempt ?? this.#opening;
        if (link === this.#opening) this.#opening = undefined;
        void link?.close();
        return;
      }
      case "go-live":
        this.#live = attempt;
        this.#opening = undefined;
        this.#hooks.wentLive();
        return;
      case "close-live": {
        const link = this.#live;
        this.#live = undefined;
        this.#hooks.wentDown();
        void link?.close();
        return;
      }
      case "schedule-retry":
        this.#clearRetry();
        this.#retryTimer = this.#clock.setTimeout(() => {
          this.#retryTimer = undefined;
          this.dispatch({ type: "retry-due" });
        }, jitteredBackoff(a.attempt));
        return;
      case "connect":
        this.#hooks.connect();
        return;
      case "await-login":
        this.#hooks.awaitLogin();
        return;
    }
  }

  #clearRetry(): void {
    if (this.#retryTimer !== undefined) this.#clock.clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
  }
}
