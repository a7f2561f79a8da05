/**
 * Writing to stdout so that nothing is lost when the process exits right after: every write
 * resolves once the data is handed to the OS. When the reader goes away (`hermit check | head`),
 * the rest of the output is dropped quietly: an EPIPE is not an error worth a stack trace (Deno
 * would otherwise throw it as an uncaught 'error' event).
 */
import process from "node:process";
import { terminalSafe } from "../gates/terminal_text.ts";

const closed = { stdout: false, stderr: false };

for (const name of ["stdout", "stderr"] as const) {
  process[name].on("error", (err: NodeJS.ErrnoException) => {
    closed[name] = true;
    // Anything but a closed pipe on stdout is worth one line on stderr.
    if (err.code !== "EPIPE" && name === "stdout") writeErr(`error: cannot write output: ${err.message}\n`);
  });
}

/**
 * Resolves once `text` (and everything written before it) is handed to the OS, or stdout is gone.
 * At a terminal, control and bidi characters in it are shown escaped (hermit's own colours kept):
 * what an upstream or a project's files say never drives the terminal. Piped, it goes as it is.
 */
export function writeOut(text: string): Promise<void> {
  if (closed.stdout) return Promise.resolve();
  const shown = process.stdout.isTTY ? terminalSafe(text, true) : text;
  return new Promise((resolve) => {
    try {
      process.stdout.write(shown, () => resolve());
    } catch {
      closed.stdout = true;
      resolve();
    }
  });
}

export function printJson(value: unknown): Promise<void> {
  return writeOut(JSON.stringify(value, null, 2) + "\n");
}

export function writeErr(text: string): void {
  if (closed.stderr) return;
  try {
    process.stderr.write(process.stderr.isTTY ? terminalSafe(text, true) : text);
  } catch {
    // stderr closed
  }
}

/** Colour only for a terminal that wants it (NO_COLOR respected). */
export const color = (() => {
  const on = process.stdout.isTTY === true && !process.env.NO_COLOR && process.env.TERM !== "dumb";
  const wrap = (code: number) => (s: string) => on ? `\x1b[${code}m${s}\x1b[0m` : s;
  return { red: wrap(31), green: wrap(32), yellow: wrap(33), dim: wrap(2), bold: wrap(1) };
})();
