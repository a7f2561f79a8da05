/** Option parsers shared by commands: each turns a flag's text into a value, or a usage error naming the flag. */
import { usageError } from "../errors.ts";

/** A positive number of seconds (fractions allowed), e.g. `--timeout 90` or `--poll 0.5`. */
export const positiveSeconds = (flag: string) => (v: string): number => {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) {
    throw usageError(`${flag} must be a positive number of seconds, got '${v}'`);
  }
  return n;
};
