/**
 * The link between a running hermit and its watchdog: before the first child group is spawned it
 * starts one watchdog supervisor in its own session, and tells it about every group that starts or
 * ends (a group the moment its pid is known: only one pipe write after the spawn returns). If
 * hermit is killed outright, the watchdog sees EOF on its stdin and reaps every group still
 * registered (on Windows: every process tree, grandchildren included). Where `/bin/sh` exists
 * (POSIX) the watchdog is the sh script of `watchdog_sh.ts` (about 1 MiB); elsewhere, or if sh
 * cannot be started, it is `hermit watchdog --ppid <us> --supervise`. If the watchdog dies, a new
 * one is started (at once while groups run, at most once a second) and given the live groups.
 * Enabling the watchdog also keeps escapes (daemons that leave their group) in reach: see
 * `trackEscapes` in `group_registry.ts`; and the watchdog gets the prefix of hermit's group tags,
 * so once hermit is gone it also stops the groups whose processes carry one (what escaped in
 * hermit's last second, before it was registered).
 */
import { accessSync, constants } from "node:fs";
import process from "node:process";
import { log } from "../log.ts";
import { selfCommand } from "../platform/runtime.ts";
import { GROUP_TAG_PREFIX } from "./escapes.ts";
import { DEFAULT_GRACE_MS } from "./group.ts";
import {
  activeGroups,
  noteRuntimeChild,
  onGroupChange,
  trackEscapes,
  untrackEscapes,
} from "./group_registry.ts";
import { startWatchdogLink, type WatchdogLink } from "./watchdog_link.ts";
import { shWatchdogArgv, type ShWatchdogLog } from "./watchdog_sh.ts";

const SH = "/bin/sh";
const RESTART_MS = 1000;

let watchdog: WatchdogLink | undefined;
let unsubscribe: (() => void) | undefined;
let shUsable = process.platform !== "win32" && process.env.HERMIT_WATCHDOG !== "hermit";
let restartTimer: ReturnType<typeof setTimeout> | undefined;
let lastStart = 0;

function canRun(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The sh watchdog where sh runs, else hermit's own. */
function watchdogArgv(): string[] {
  if (shUsable && canRun(SH)) {
    const level: ShWatchdogLog = log.enabled("debug") ? "debug" : log.enabled("warn") ? "warn" : "silent";
    return shWatchdogArgv(SH, process.pid, DEFAULT_GRACE_MS, level, GROUP_TAG_PREFIX);
  }
  const [cmd, ...pre] = selfCommand();
  return [cmd, ...pre, "watchdog", "--ppid", String(process.pid), "--supervise", "--tag", GROUP_TAG_PREFIX];
}

function start(): WatchdogLink {
  lastStart = Date.now();
  const argv = watchdogArgv();
  const link: WatchdogLink = startWatchdogLink(argv, {
    failed(err) {
      if (watchdog === link) watchdog = undefined;
      if (argv[0] !== SH) {
        log.warn(`cannot start the watchdog (${err.message}); children may outlive a killed hermit`);
        return;
      }
      shUsable = false; // hermit's own from now on
      log.debug(`cannot start ${SH} as the watchdog (${err.message}); starting hermit's own`);
      if (unsubscribe && !watchdog && activeGroups().length > 0) watchdog = start();
    },
    exited() {
      if (link.pid !== undefined) noteRuntimeChild(link.pid, false);
      if (watchdog !== link) return;
      watchdog = undefined;
      if (unsubscribe && activeGroups().length > 0) scheduleRestart();
    },
  });
  if (link.pid !== undefined) noteRuntimeChild(link.pid, true);
  for (const pgid of activeGroups()) link.send(`register ${pgid}`);
  return link;
}

/** A watchdog that died while groups run is replaced, at most once every RESTART_MS. */
function scheduleRestart(): void {
  if (restartTimer) return;
  restartTimer = setTimeout(() => {
    restartTimer = undefined;
    if (unsubscribe && !watchdog && activeGroups().length > 0) watchdog = start();
  }, Math.max(0, lastStart + RESTART_MS - Date.now()));
  (restartTimer as { unref?: () => void }).unref?.();
}

/** Start watching: every group spawned from now on (and every escape) is registered. */
export function enableWatchdog(): void {
  if (unsubscribe) return;
  trackEscapes();
  unsubscribe = onGroupChange((event, pgid) => {
    if (event === "prepare") {
      watchdog ??= start(); // before the child: told of it the moment its pid is known
      return;
    }
    if (event === "add" && !watchdog) {
      watchdog = start(); // replays every active group, this one included
      return;
    }
    watchdog?.send(`${event === "add" ? "register" : "unregister"} ${pgid}`);
  });
}

/**
 * Stop watching (after hermit has stopped its groups itself): unregister what is left, close the
 * pipe and wait (briefly) until that is flushed, so the watchdog exits quietly on EOF.
 */
export function disableWatchdog(): Promise<void> {
  if (unsubscribe) untrackEscapes();
  unsubscribe?.();
  unsubscribe = undefined;
  clearTimeout(restartTimer);
  restartTimer = undefined;
  const w = watchdog;
  watchdog = undefined;
  if (!w) return Promise.resolve();
  for (const pgid of activeGroups()) w.send(`unregister ${pgid}`);
  return w.close();
}
