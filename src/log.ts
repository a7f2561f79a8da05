/**
 * Logging. Every line goes to stderr: stdout is the protocol channel in `serve` (a daemon's
 * stderr is its log file, `DIR/.serve/log`). `HERMIT_LOG=debug|info|warn|error|silent` sets the
 * threshold (default info); `HERMIT_LOG_TIMESTAMPS=1` prefixes each line with the time. The sink is
 * replaceable (`setLogSink`) for a process that must not load Node's streams.
 */
import process from "node:process";

const levels = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 } as const;
export type Level = keyof typeof levels;

let threshold: number = levels[(process.env.HERMIT_LOG as Level) ?? "info"] ?? levels.info;
const timestamps = process.env.HERMIT_LOG_TIMESTAMPS === "1";

export function setLogLevel(level: Level): void {
  threshold = levels[level];
}

let sink = (text: string): void => void process.stderr.write(text);

/** Where log lines go (default `process.stderr`; the lean relay passes a cheaper writer). */
export function setLogSink(write: (text: string) => void): void {
  sink = write;
}

function emit(level: Level, message: string): void {
  if (levels[level] < threshold) return;
  const prefix = (timestamps ? new Date().toISOString() + " " : "") +
    (level === "info" ? "hermit: " : `hermit: ${level}: `);
  try {
    sink(prefix + message + "\n");
  } catch {
    // stderr closed: nothing more to do
  }
}

export const log = {
  debug: (m: string) => emit("debug", m),
  info: (m: string) => emit("info", m),
  warn: (m: string) => emit("warn", m),
  error: (m: string) => emit("error", m),
  enabled: (level: Level) => levels[level] >= threshold,
};
