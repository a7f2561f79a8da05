/**
 * Exit codes and the error type that carries one. Domain code throws `HermitError`;
 * `errorReport` turns it into one `error: …` line on stderr and an exit code (for the command-line
 * app and for main.ts's `serve` fast path), and only `src/main.ts` exits. Also how any thrown
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

/** How a thrown value is reported: the `error: …` lines for stderr, and the exit code. Pure. */
export function errorReport(err: unknown): { text: string; code: ExitCode } {
  if (err instanceof HermitError) {
    return { text: err.message.split("\n").map((line) => `error: ${line}\n`).join(""), code: err.exitCode };
  }
  return { text: `error: unexpected: ${messageOf(err)}\n`, code: Exit.unexpected };
}
