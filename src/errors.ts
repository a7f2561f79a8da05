/**
 * Exit codes and the error type that carries one. Domain code throws `HermitError`;
 * `src/cli/app.ts` turns it into one `error: …` line on stderr and an exit code, and only
 * `src/main.ts` exits. Also how any thrown
 * value becomes a message (`messageOf`, and `mcpMessageOf` for errors from the MCP SDK).
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

/** The message of an error from the MCP SDK without the `MCP error -N: ` prefixes it adds. */
export function mcpMessageOf(err: unknown): string {
  return messageOf(err).replace(/^(MCP error -?\d+: )+/, "");
}
