/**
 * Logging. Every line goes to stderr (stdout is the protocol channel in `serve`), optionally
 * mirrored to a file (the daemon's `DIR/.serve/log`). `HERMIT_LOG=debug|info|warn|error` sets the
 * threshold (default info).
 */
import { appendFileSync } from "node:fs";
import process from "node:process";

const levels = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 } as const;
type Level = keyof typeof levels;

let threshold: number = levels[(process.env.HERMIT_LOG as Level) ?? "info"] ?? levels.info;
let mirrorFile: string | undefined;
let withTimestamps = false;

export function setLogLevel(level: Level): void {
  threshold = levels[level];
}

/** Also append every line to `path` (with timestamps), as the daemon does. */
export function mirrorLogTo(path: string | undefined): void {
  mirrorFile = path;
  withTimestamps = path !== undefined;
}

function emit(level: Level, message: string): void {
  if (levels[level] < threshold) return;
  const prefix = level === "info" ? "hermit: " : `hermit: ${level}: `;
  const line = prefix + message + "\n";
  try {
    process.stderr.write(line);
  } catch {
    // stderr closed: nothing more to do
  }
  if (mirrorFile) {
    const stamp = withTimestamps ? new Date().toISOString() + " " : "";
    try {
      appendFileSync(mirrorFile, stamp + line);
    } catch {
      // the log file is best effort
    }
  }
}

export const log = {
  debug: (m: string) => emit("debug", m),
  info: (m: string) => emit("info", m),
  warn: (m: string) => emit("warn", m),
  error: (m: string) => emit("error", m),
  enabled: (level: Level) => levels[level] >= threshold,
};
