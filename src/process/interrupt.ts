/**
 * A one-shot command interrupted (Ctrl-C, SIGTERM, SIGHUP) while processes of its own run
 * (`check`'s live start, `call`, `tools`, `lock`, `add`'s fetch): hermit stops them itself and
 * tells the watchdog, then ends of the same signal (exit 130 for Ctrl-C). So the stop is over
 * before the shell's prompt returns, and no watchdog warning about a parent that "closed the pipe"
 * lands after it. Once interrupted, the command says nothing more (its half-done report would
 * be wrong). A second signal ends at once; the watchdog then stops what is left, as after kill -9.
 */
import process from "node:process";
import { setLogSink } from "../log.ts";
import { clearProgressLine } from "../progress.ts";
import { stopAllGroups } from "./group.ts";
import { STOP_SIGNALS } from "./host_end.ts";
import { disableWatchdog } from "./supervisor.ts";

/** Run `fn`; on a signal meanwhile, stop every group and end of that signal. */
export async function stoppingOnSignal<T>(fn: () => Promise<T>): Promise<T> {
  let interrupted = false;
  const remove = () => {
    for (const s of STOP_SIGNALS) process.off(s, onSignal);
  };
  const die = (signal: NodeJS.Signals) => {
    remove(); // the default action again: the process ends of the signal
    process.kill(process.pid, signal);
  };
  function onSignal(signal: NodeJS.Signals): void {
    if (interrupted) return die(signal);
    interrupted = true;
    clearProgressLine();
    setLogSink(() => {}); // servers stopping now are not failures to report
    void stopAllGroups().then(disableWatchdog).catch(() => {}).finally(() => die(signal));
  }
  for (const s of STOP_SIGNALS) process.on(s, onSignal);
  const never = new Promise<never>(() => {});
  try {
    const result = await fn();
    if (interrupted) await never; // the stop ends the process
    return result;
  } catch (err) {
    if (interrupted) await never;
    throw err;
  } finally {
    if (!interrupted) remove();
  }
}
