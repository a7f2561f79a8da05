/**
 * Logging. Every line goes to stderr: stdout is the protocol channel in `serve` (a daemon's
 * stderr is its log file, `DIR/.serve/log`). `HERMIT_LOG=debug|info|warn|error|silent` sets the
 * threshold (default info); `HERMIT_LOG_TIMESTAMPS=1` prefixes each line with the time.
 *
 * A line may carry an event (a tagged record of what happened, e.g. an upstream that could not be
 * started): `HERMIT_LOG_FORMAT=json` writes each line as `{"level", "message", "event"?}` so that
 * `hermit check` can read what the `hermit serve` it started said without parsing sentences, and
 * a one-shot command can leave out, with `omitEvents`, the lines its own report already says.
 * The sink is replaceable (`setLogSink`) for a process that must not load Node's streams. Control
 * characters in a message are shown escaped (`gates/terminal_text.ts`).
 */
import process from "node:process";
import { terminalSafe } from "./gates/terminal_text.ts";
import { clearProgressLine } from "./progress.ts";

const levels = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 } as const;
export type Level = keyof typeof levels;

/** What a log line reports, for programs: the line's text is for people. */
export type LogEvent =
  /** An upstream could not be started (or reconnected); `reason` is why, without retry details. */
  | { kind: "upstream-failed"; server: string; reason: string }
  /** An exported tool is not served; `why` as `hermit tools` says it. */
  | { kind: "not-served"; tool: string; why: string };

let threshold: number = levels[(process.env.HERMIT_LOG as Level) ?? "info"] ?? levels.info;
const timestamps = process.env.HERMIT_LOG_TIMESTAMPS === "1";
const json = process.env.HERMIT_LOG_FORMAT === "json";
let omitted = new Set<LogEvent["kind"]>();

export function setLogLevel(level: Level): void {
  threshold = levels[level];
}

/** Leave out lines carrying these events (a one-shot command whose report says them). */
export function omitEvents(kinds: LogEvent["kind"][]): void {
  omitted = new Set(kinds);
}

// a wait line on the terminal (progress.ts) is erased first, so the log line is not glued to it
let sink = (text: string): void => {
  clearProgressLine();
  process.stderr.write(text);
};

/** Where log lines go (default `process.stderr`; the lean relay passes a cheaper writer). */
export function setLogSink(write: (text: string) => void): void {
  sink = write;
}

function emit(level: Level, text: string, event?: LogEvent): void {
  if (levels[level] < threshold || (event && omitted.has(event.kind))) return;
  // what an upstream said (its stderr, its descriptions) never drives the reader's terminal
  const message = terminalSafe(text);
  const line = json
    ? JSON.stringify({ level, message, ...(event ? { event } : {}) })
    : (timestamps ? new Date().toISOString() + " " : "") +
      (level === "info" ? "hermit: " : `hermit: ${level}: `) + message;
  try {
    sink(line + "\n");
  } catch {
    // stderr closed: nothing more to do
  }
}

export const log = {
  debug: (m: string, event?: LogEvent) => emit("debug", m, event),
  info: (m: string, event?: LogEvent) => emit("info", m, event),
  warn: (m: string, event?: LogEvent) => emit("warn", m, event),
  error: (m: string, event?: LogEvent) => emit("error", m, event),
  enabled: (level: Level) => levels[level] >= threshold,
};

/** A line `HERMIT_LOG_FORMAT=json` wrote, or undefined for anything else. */
export function parseLogLine(line: string): { level: Level; message: string; event?: LogEvent } | undefined {
  if (!line.startsWith("{")) return undefined;
  try {
    const v = JSON.parse(line);
    return typeof v?.message === "string" && typeof v?.level === "string" && v.level in levels
      ? v
      : undefined;
  } catch {
    return undefined;
  }
}
