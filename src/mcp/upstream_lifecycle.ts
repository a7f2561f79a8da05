/**
 * Timers of a live upstream connection: the keepalive `ping` for HTTP servers, and for stdio
 * servers the idle timeout (since the last call) and the maximum lifetime (since connect), which
 * recycle the process; it restarts on the next call. Also the two backoff curves.
 */
import type { Upstream } from "../manifest/types.ts";
import type { Clock } from "../platform/clock.ts";

/** Connect cooldown after n consecutive failures: min(30·2^(n-1), 600) seconds. */
export function cooldownSeconds(failures: number): number {
  return Math.min(30 * 2 ** Math.max(0, failures - 1), 600);
}

/** Reconnect backoff for attempt n: 1, 2, 4 … 60 s, ±20 % jitter. */
export function jitteredBackoff(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(2 ** (attempt - 1), 60) * 1000;
  return Math.round(base * (0.8 + 0.4 * random()));
}

/** Fires once when a tool list's `ttlMs` runs out (re-armed by every new listing). */
export class TtlTimer {
  readonly #clock: Clock;
  #handle: unknown;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  arm(expiresAt: number | undefined, onExpire: () => void): void {
    this.clear();
    if (expiresAt === undefined) return;
    this.#handle = this.#clock.setTimeout(() => {
      this.#handle = undefined;
      onExpire();
    }, Math.max(0, expiresAt - this.#clock.now()));
  }

  clear(): void {
    if (this.#handle !== undefined) this.#clock.clearTimeout(this.#handle);
    this.#handle = undefined;
  }
}

export interface LifecycleHooks {
  busy(): boolean;
  recycle(why: string): void;
  ping(): Promise<void>;
}

export class UpstreamLifecycle {
  readonly #config: Upstream;
  readonly #clock: Clock;
  readonly #hooks: LifecycleHooks;
  #connectedAt = 0;
  #lastActivity = 0;
  #recycleTimer: unknown;
  #keepaliveTimer: unknown;

  constructor(config: Upstream, clock: Clock, hooks: LifecycleHooks) {
    this.#config = config;
    this.#clock = clock;
    this.#hooks = hooks;
  }

  connected(): void {
    this.disconnected();
    this.#connectedAt = this.#clock.now();
    this.#lastActivity = this.#connectedAt;
    if (this.#config.kind !== "stdio") this.#armKeepalive();
    this.#arm();
  }

  activity(): void {
    this.#lastActivity = this.#clock.now();
    this.#arm();
  }

  disconnected(): void {
    this.#clear(this.#recycleTimer);
    this.#clear(this.#keepaliveTimer);
    this.#recycleTimer = undefined;
    this.#keepaliveTimer = undefined;
  }

  /** Which recycle deadline comes first, if any (pure, for tests). */
  nextRecycle(): { at: number; why: string } | undefined {
    const { idleTimeoutSeconds: idle, maxLifetimeSeconds: life } = this.#config;
    const candidates: { at: number; why: string }[] = [];
    if (life > 0) {
      candidates.push({ at: this.#connectedAt + life * 1000, why: `max_lifetime_seconds ${life}` });
    }
    if (idle > 0) candidates.push({ at: this.#lastActivity + idle * 1000, why: `idle for ${idle} s` });
    // lifetime wins ties, as in Hermes
    return candidates.sort((a, b) => a.at - b.at)[0];
  }

  #armKeepalive(): void {
    this.#keepaliveTimer = this.#clock.setTimeout(() => {
      if (!this.#hooks.busy()) void this.#hooks.ping();
      this.#armKeepalive();
    }, this.#config.keepaliveSeconds * 1000);
  }

  #arm(): void {
    this.#clear(this.#recycleTimer);
    this.#recycleTimer = undefined;
    if (this.#config.kind !== "stdio" || !this.#connectedAt) return;
    const next = this.nextRecycle();
    if (!next) return;
    this.#recycleTimer = this.#clock.setTimeout(() => {
      if (this.#hooks.busy()) return; // the call's end re-arms
      if (this.#clock.now() >= next.at - 5) this.#hooks.recycle(next.why);
      else this.#arm();
    }, Math.max(0, next.at - this.#clock.now()));
  }

  #clear(handle: unknown): void {
    if (handle !== undefined) this.#clock.clearTimeout(handle);
  }
}
