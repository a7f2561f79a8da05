/**
 * Saying what a slow wait is waiting on, to a person at a terminal: once the wait has lasted a
 * moment (1.5 s; `HERMIT_PROGRESS_AFTER_MS` changes it), one line on stderr, `hermit: waiting for
 * X… 4 s`, rewritten in place every second and erased when the wait ends. Nothing at all when
 * stderr is not a terminal (a host's pipe, a log file, a script) and never anything on stdout,
 * which is the protocol channel in `serve`.
 */
import process from "node:process";
import { terminalSafe } from "./gates/terminal_text.ts";

/** Where the line goes: stderr, unless a test gives its own. */
export interface ProgressStream {
  isTTY?: boolean;
  columns?: number;
  write(text: string): unknown;
}

export interface ProgressOptions {
  stream?: ProgressStream;
  /** How long a wait lasts before it is shown. */
  afterMs?: number;
}

export interface Waiting {
  /** The wait is over: erase the line (if one was shown). */
  done(): void;
}

const DEFAULT_AFTER_MS = 1500;

/** The line for a wait on `what` that has lasted `elapsedMs`, fitted to `columns`. Pure. */
export function progressLine(what: string, elapsedMs: number, columns?: number): string {
  const secs = ` ${Math.floor(elapsedMs / 1000)} s`;
  const text = `hermit: waiting for ${what}…`;
  // a terminal that does not say its width (0) is taken as 80 wide
  const room = Math.max(20, (columns || 80) - 1 - secs.length);
  return (text.length > room ? `${text.slice(0, room - 1)}…` : text) + secs;
}

/** The wait line on the screen now, if any: how to take it off before a log line is written. */
let onScreen: (() => void) | undefined;

/** Erase the wait line (if one shows) so that a log line starts a line of its own; redrawn next tick. */
export function clearProgressLine(): void {
  onScreen?.();
}

/** Start showing a wait on `what` (after a moment, on a terminal only); call `done()` when it ends. */
export function waitingOn(what: string, opts: ProgressOptions = {}): Waiting {
  const stream = opts.stream ?? process.stderr;
  if (!stream.isTTY) return { done() {} };
  const afterMs = opts.afterMs ?? afterFromEnv(process.env.HERMIT_PROGRESS_AFTER_MS);
  const t0 = Date.now();
  let shown = false;
  let ticker: ReturnType<typeof setInterval> | undefined;
  const hide = () => {
    if (shown) write(stream, "\r\x1b[K");
    shown = false;
  };
  const draw = () => {
    shown = true;
    onScreen = hide;
    // what it names may come from a manifest (a command line): shown, never obeyed
    write(stream, `\r\x1b[K${terminalSafe(progressLine(what, Date.now() - t0, stream.columns))}`);
  };
  const start = setTimeout(() => {
    draw();
    ticker = setInterval(draw, 1000);
    (ticker as { unref?: () => void }).unref?.();
  }, Math.max(0, afterMs));
  (start as { unref?: () => void }).unref?.();
  return {
    done() {
      clearTimeout(start);
      clearInterval(ticker);
      hide();
      if (onScreen === hide) onScreen = undefined;
    },
  };
}

/** `promise`, with its wait shown as `waitingOn(what)` until it settles. */
export async function whileWaiting<T>(what: string, promise: Promise<T>, opts?: ProgressOptions): Promise<T> {
  const w = waitingOn(what, opts);
  try {
    return await promise;
  } finally {
    w.done();
  }
}

function afterFromEnv(value: string | undefined): number {
  const n = Number(value);
  return value !== undefined && value !== "" && Number.isFinite(n) && n >= 0 ? n : DEFAULT_AFTER_MS;
}

function write(stream: ProgressStream, text: string): void {
  try {
    stream.write(text);
  } catch {
    // stderr closed: nothing to show it on
  }
}
