/**
 * How a stdio process (a serve session, a relay) learns that its host is done with it, besides
 * stdin closing: a stop signal, or the host process gone (`watchParent`). And how long what the
 * host already asked may still be answered once it closed stdin.
 */
import process from "node:process";
import { watchParent } from "./parent.ts";

/** How long requests already received may still be answered after the host closes stdin. */
export const DRAIN_MS = 30_000;

/** How often the host process (our parent) is checked. */
const HOST_POLL_MS = 2000;

/** The signals that ask a process to stop (a host's shutdown, Ctrl-C, a closed terminal). */
export const STOP_SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP"] as const;

/** What ends a stdio process from outside: a signal, or its host (our parent) gone. */
export type HostEnd =
  | { cause: "signal"; signal: NodeJS.Signals; text: string }
  | { cause: "host-gone"; text: string };

/**
 * Resolves with the first SIGTERM, SIGINT or SIGHUP, or the host's death (our parent, checked
 * every `pollMs` by `watchParent`). It keeps listening until `stop`, whatever else ended the
 * session first: a host that closes stdin and then signals cuts the drain that follows. Each
 * signal is taken once (a second one ends the process as it would without hermit); the poll
 * stops at the first end, and keeps the process alive until then only with `keepAlive` (serve,
 * whose stdin alone might not).
 */
export function hostEnd(
  opts: { hostGone?: () => string | undefined; pollMs?: number; keepAlive?: boolean } = {},
): { ended: Promise<HostEnd>; stop(): void } {
  const gone = opts.hostGone ?? watchParent(process.ppid);
  const handlers = new Map<NodeJS.Signals, () => void>();
  let poll: ReturnType<typeof setInterval> | undefined;
  const stop = () => {
    clearInterval(poll);
    handlers.forEach((on, sig) => process.off(sig, on));
    handlers.clear();
  };
  const ended = new Promise<HostEnd>((resolve) => {
    const done = (end: HostEnd) => {
      clearInterval(poll);
      resolve(end);
    };
    poll = setInterval(() => {
      const why = gone();
      if (why) done({ cause: "host-gone", text: `the host process is gone (${why})` });
    }, opts.pollMs ?? HOST_POLL_MS);
    if (!opts.keepAlive) (poll as { unref?: () => void }).unref?.();
    for (const signal of STOP_SIGNALS) {
      const on = () => {
        process.off(signal, on);
        handlers.delete(signal);
        done({ cause: "signal", signal, text: `received ${signal}` });
      };
      handlers.set(signal, on);
      process.on(signal, on);
    }
  });
  return { ended, stop };
}
