/**
 * A process image without JavaScriptCore's JIT and without Bun's GC timer, for the relay. A relay
 * runs once per host session and mostly waits; its work per message is parsing a line and passing
 * it on, which the interpreter does as fast as the JIT within the noise of an HTTP hop. The JIT,
 * though, costs a relay about 3 MiB resident (its thunks and code, made at start-up, and the
 * compiler's own code paged in). Bun's GC timer collects every second while the heap keeps
 * changing, and a waiting relay's host check changes it a little every two seconds: that alone is
 * about 8 of an idle relay's 12 ms of CPU per second, and the relay paces its own collections by
 * messages (`gc.ts`). JavaScriptCore and Bun read both switches only when a process starts, from
 * the environment. So a relay in the compiled binary replaces itself, once, with the same binary
 * and arguments under `BUN_JSC_useJIT=0` and `BUN_GC_TIMER_DISABLE=1` (execve: same pid, same
 * stdio, nothing read from the host yet), and the new image takes the variables it set out of its
 * environment again so that nothing it starts (a service it launches, which needs both) inherits
 * them. Nowhere else: not under Deno or Bun running the sources (their memory is not the point),
 * not on Windows (no execve), not when the user set the JIT switch (then nothing is re-executed)
 * or the GC timer's own variables (then those are theirs), and not when the exec fails (the relay
 * then simply keeps its JIT). What needs the JIT (Bun's FFI, which the launch lock's flock goes
 * through) asks `jitlessImage()` and runs elsewhere.
 */
import process from "node:process";
import { compiled, runtime, selfCommand } from "./runtime.ts";

/** Set in the re-executed image to the variables the re-execution set (to take them out again). */
const MARK = "HERMIT_NO_JIT_IMAGE";
const JIT_SWITCH = "BUN_JSC_useJIT";
const GC_TIMER_OFF = "BUN_GC_TIMER_DISABLE";
/** Bun's GC timer variables: when the user set either, the timer is theirs to configure. */
const GC_TIMER_VARS = [GC_TIMER_OFF, "BUN_GC_TIMER_INTERVAL"];

type Execve = (file: string, args: string[], env: Record<string, string>) => never;

let jitless = false;

/** Is this process the re-executed image, without the JIT (and so without Bun's FFI)? */
export function jitlessImage(): boolean {
  return jitless;
}

/** In the re-executed image, take the variables it was given out of `env` (true); false elsewhere. */
export function forgetReexec(env: Record<string, string | undefined>): boolean {
  const set = env[MARK];
  if (!set) return false;
  delete env[MARK];
  for (const name of set.split(",")) if (name === JIT_SWITCH || name === GC_TIMER_OFF) delete env[name];
  return true;
}

/** The environment the re-executed image starts with: `env` with the switches and the mark. */
export function reexecEnv(env: Record<string, string | undefined>): Record<string, string> {
  const next: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) next[k] = v;
  const set = [JIT_SWITCH];
  next[JIT_SWITCH] = "0";
  if (!GC_TIMER_VARS.some((name) => env[name] !== undefined)) {
    next[GC_TIMER_OFF] = "1";
    set.push(GC_TIMER_OFF);
  }
  next[MARK] = set.join(",");
  return next;
}

/**
 * In the re-executed image: forget the variables (true). Otherwise, where it applies, replace this
 * process with one without the JIT (does not return); false when it does not apply or failed.
 */
export function withoutJit(env: Record<string, string | undefined> = process.env): boolean {
  if (forgetReexec(env)) return (jitless = true);
  const execve = (process as unknown as { execve?: Execve }).execve;
  if (!compiled || runtime !== "bun" || process.platform === "win32" || typeof execve !== "function") {
    return false;
  }
  if (env[JIT_SWITCH] !== undefined) return false; // the user's own choice
  const [file, ...pre] = selfCommand(); // the binary, or the HERMIT_SELF that stands for it
  try {
    execve(file, [file, ...pre, ...process.argv.slice(2)], reexecEnv(env));
  } catch { /* the binary is gone or not executable any more: keep going with the JIT */ }
  return false;
}
