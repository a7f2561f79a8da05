/**
 * Exit codes and the error type that carries one. Domain code throws `HermitError`; only
 * `src/main.ts` turns it into a line on stderr and a process exit code.
 */

export const Exit = {
  ok: 0,
  unexpected: 1,
  usage: 2,
  problems: 3,
  refused: 4,
  noService: 5,
} as const;

export type ExitCode = typeof Exit[keyof typeof Exit];

/** An error meant for a person: `message` is one line (or several, each complete), never a stack. */
export class HermitError extends Error {
  readonly exitCode: ExitCode;
  constructor(message: string, exitCode: ExitCode = Exit.unexpected) {
    super(message);
    this.name = "HermitError";
    this.exitCode = exitCode;
  }
}

export function usageError(message: string): HermitError {
  return new HermitError(message, Exit.usage);
}

/** The message of anything thrown, without a stack trace. */
export function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}
