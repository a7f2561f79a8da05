/**
 * The link between a running hermit and its watchdog: on the first child group it starts one
 * `hermit watchdog --ppid <us> --supervise` in its own session and tells it about every group
 * that starts or ends. If hermit is killed outright, the watchdog sees EOF on its stdin and reaps
 * every group still registered (on Windows: every process tree, grandchildren included). If the
 * watchdog dies, the next change starts a new one and replays the live groups.
 */
import { type ChildProcess, spawn } from "node:child_process";
import process from "node:process";
import { log } from "../log.ts";
import { selfCommand } from "../platform/runtime.ts";
import { activeGroups, onGroupChange } from "./group.ts";

let watchdog: ChildProcess | undefined;
let unsubscribe: (() => void) | undefined;

function start(): ChildProcess {
  const [cmd, ...pre] = selfCommand();
  const child = spawn(cmd, [...pre, "watchdog", "--ppid", String(process.pid), "--supervise"], {
    // Own session on POSIX. On Windows, outside the kill-on-close job object the runtime (libuv)
    // puts children in: that job ends hermit's direct children with it, but not their children,
    // and the watchdog must outlive hermit to end those.
    detached: true,
    stdio: ["pipe", "ignore", "inherit"],
    env: process.env as Record<string, string>,
    windowsHide: true,
  });
  child.on(
    "error",
    (err) => log.warn(`cannot start the watchdog (${err.message}); children may outlive a killed hermit`),
  );
  child.stdin?.on("error", () => {/* the watchdog went away; the exit handler restarts it */});
  child.once("exit", () => {
    if (watchdog === child) watchdog = undefined;
  });
  child.unref();
  (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  for (const pgid of activeGroups()) child.stdin?.write(`register ${pgid}\n`);
  return child;
}

/** Start watching: every group spawned from now on is registered with the watchdog. */
export function enableWatchdog(): void {
  if (unsubscribe) return;
  unsubscribe = onGroupChange((event, pgid) => {
    if (event === "add" && !watchdog) {
      watchdog = start(); // replays every active group, this one included
      return;
    }
    watchdog?.stdin?.write(`${event === "add" ? "register" : "unregister"} ${pgid}\n`);
  });
}

/**
 * Stop watching (after hermit has stopped its groups itself): unregister what is left, close the
 * pipe and wait (briefly) until that is flushed, so the watchdog exits quietly on EOF.
 */
export function disableWatchdog(): Promise<void> {
  unsubscribe?.();
  unsubscribe = undefined;
  const w = watchdog;
  watchdog = undefined;
  if (!w?.stdin || w.stdin.destroyed) return Promise.resolve();
  for (const pgid of activeGroups()) w.stdin.write(`unregister ${pgid}\n`);
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 1000);
    w.stdin!.end(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
