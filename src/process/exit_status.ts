/**
 * One way to describe how a process ended, whatever reported it: the runtime's (code, signal)
 * pair, a spawn error, or a shell's 126/127/128+n convention. Like a shell, only "no such file"
 * is 127; every other reason a command could not start is 126.
 */
import os from "node:os";

export interface ExitStatus {
  /** The shell-style number: the exit code, or 128 + signal number. */
  code: number;
  /** The signal that ended it: reported by the runtime, or read from a shell's 128+n code. */
  signal?: string;
  /** For people: "exited with 3", "killed by SIGKILL", "command not found: x". */
  reason: string;
}

const signalNumbers = os.constants.signals as Record<string, number>;

function signalName(n: number): string | undefined {
  return Object.keys(signalNumbers).find((k) => signalNumbers[k] === n);
}

/** From the runtime's exit event; the signal wins when both are given. */
export function exitStatusOf(code: number | null, signal: string | null): ExitStatus {
  if (signal) {
    const n = signalNumbers[signal] ?? 0;
    return { code: 128 + n, signal, reason: `killed by ${signal}` };
  }
  const c = code ?? 0;
  if (c === 126) return { code: c, reason: "command not executable (126)" };
  if (c === 127) return { code: c, reason: "command not found (127)" };
  if (c > 128 && c <= 128 + 64) {
    const name = signalName(c - 128);
    if (name) return { code: c, signal: name, reason: `exited with ${c} (${name})` };
  }
  return { code: c, reason: c === 0 ? "exited normally" : `exited with ${c}` };
}

/** From the error event of a child that never started. */
export function spawnErrorStatus(command: string, err: NodeJS.ErrnoException): ExitStatus {
  if (err.code === "ENOENT") return { code: 127, reason: `command not found: ${command}` };
  if (err.code === "EACCES") return { code: 126, reason: `command not executable: ${command}` };
  if (err.code === "ENOEXEC") {
    return { code: 126, reason: `command not executable: ${command} (neither a program nor a #! script)` };
  }
  return { code: 126, reason: `cannot start ${command}: ${err.message}` };
}
