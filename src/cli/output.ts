/**
 * Writing to stdout so that nothing is lost when the process exits right after: every write
 * resolves once the data is handed to the OS.
 */
import process from "node:process";

export function writeOut(text: string): Promise<void> {
  return new Promise((resolve) => {
    try {
      process.stdout.write(text, () => resolve());
    } catch {
      resolve();
    }
  });
}

export function printJson(value: unknown): Promise<void> {
  return writeOut(JSON.stringify(value, null, 2) + "\n");
}

export function writeErr(text: string): void {
  try {
    process.stderr.write(text);
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
