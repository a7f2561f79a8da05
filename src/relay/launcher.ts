/**
 * Launching a standalone service from a relay that runs without the JIT (`platform/no_jit.ts`).
 * The launch lock is a flock taken through Bun's FFI, and Bun's FFI needs the JIT; a relay that
 * took the lock some other way would not exclude the hermits that take it as a flock. So such a
 * relay starts `hermit serve DIR --launch-service`: a short-lived hermit with its JIT that finds or
 * launches the service under the lock exactly as a relay with its JIT does in-process, and says on
 * stdout how that went, as one JSON line (`{"ok":true}`, or the error and its exit code). Its
 * stderr is the relay's, so what it says on the way (the service starting, a wait shown on a
 * terminal) reads as it would from the relay itself.
 */
import { Exit, type ExitCode, HermitError, messageOf } from "../errors.ts";
import type { Manifest } from "../manifest/types.ts";
import { runForOutput } from "../platform/run_output.ts";
import { selfCommand } from "../platform/runtime.ts";

/** The hidden flag of `hermit serve` that runs the launcher. */
export const LAUNCH_FLAG = "--launch-service";

type Outcome = { ok: true } | { ok?: false; error: string; code: ExitCode };

/** The launcher itself: find or launch the service for `m` under the lock, report on stdout. */
export async function launchServiceMain(
  m: Manifest,
  writeLine: (line: string) => void | Promise<void>,
): Promise<number> {
  const { findOrLaunch } = await import("../service/launch.ts");
  let outcome: Outcome;
  try {
    await findOrLaunch(m, true);
    outcome = { ok: true };
  } catch (err) {
    outcome = err instanceof HermitError
      ? { error: err.message, code: err.exitCode }
      : { error: `unexpected: ${messageOf(err)}`, code: Exit.unexpected };
  }
  await writeLine(JSON.stringify(outcome));
  return outcome.ok ? 0 : outcome.code;
}

/** The relay's side: run the launcher; returns once the service runs, throws its error otherwise. */
export async function launchInChild(m: Manifest): Promise<void> {
  const { code, stdout } = await runForOutput([...selfCommand(), "serve", m.dir, LAUNCH_FLAG]);
  let outcome: Outcome | undefined;
  try {
    outcome = JSON.parse(stdout.trim().split("\n").pop() ?? "") as Outcome;
  } catch { /* said nothing we can read: judged by its exit code */ }
  if (outcome?.ok === true) return;
  if (outcome && typeof outcome.error === "string") throw new HermitError(outcome.error, outcome.code);
  throw new HermitError(
    `the service launcher (hermit serve … ${LAUNCH_FLAG}) ended with ${code}`,
    Exit.unexpected,
  );
}
