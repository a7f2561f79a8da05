/**
 * Graceful drain: what a service does between SIGTERM and closing its port. It stops taking
 * sessions and requests (the registry answers 503, so balancers retry elsewhere and relays move),
 * waits for the requests in flight for at most the bound (`serve.drain_seconds`), then refuses
 * what it held and, if clients were attached, keeps answering 503 for a moment so they find out
 * before the port closes (past the bound, only long enough for the cut calls' answers to go out).
 * A second stop request cuts the wait short. Time comes from `clock`.
 */

export interface Drainable {
  drain(): { idle: Promise<void>; end(): void };
  readonly inFlight: number;
  readonly count: number;
  closeAll(): void;
}

export interface DrainClock {
  now(): number;
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

/** After the calls finished, attached clients get this long of 503s before the port closes. */
export const LINGER_MS = 1000;
/** Past the bound, the answers saying calls were cut get this long to go out. */
export const FLUSH_MS = 200;

export interface DrainOutcome {
  /** Every request in flight finished within the bound. */
  finished: boolean;
  /** Requests still running when the wait ended (cut). */
  cut: number;
}

export async function drain(
  sessions: Drainable,
  boundMs: number,
  clock: DrainClock,
  hurry: AbortSignal,
): Promise<DrainOutcome> {
  const deadline = clock.now() + boundMs;
  const attached = sessions.count > 0;
  const d = sessions.drain();
  const waits = new AbortController();
  const stop = () => waits.abort();
  hurry.addEventListener("abort", stop, { once: true });
  try {
    const finished = await Promise.race([
      d.idle.then(() => true),
      clock.sleep(boundMs, waits.signal).then(() => false, () => false),
    ]);
    const cut = finished ? 0 : sessions.inFlight;
    d.end();
    sessions.closeAll();
    const linger = Math.max(cut > 0 ? FLUSH_MS : 0, Math.min(LINGER_MS, deadline - clock.now()));
    if (attached && linger > 0 && !hurry.aborted) await clock.sleep(linger, waits.signal).catch(() => {});
    return { finished, cut };
  } finally {
    waits.abort();
    hurry.removeEventListener("abort", stop);
  }
}

/** Real time, for the service. */
export const realClock: DrainClock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const t = setTimeout(resolve, ms);
      signal.addEventListener("abort", () => (clearTimeout(t), reject(signal.reason)), { once: true });
    }),
};
