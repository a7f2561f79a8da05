/**
 * The pipe to a running watchdog: its process, started in its own session, and the lines hermit
 * sends it, each written to the pipe before `send` returns. That is the point of this module: a
 * group is registered with one line right after it is spawned, and a `kill -9` of hermit between
 * the spawn and the write would leave that group to run on. Node's and Deno's child_process write
 * to a pipe at once; Bun's queues the write until its event loop turns (measured: a line written
 * and hermit killed in the same tick never arrived, 20 of 20), long enough for a quick child to
 * run, or for anyone to kill hermit while it is busy. So under Bun on POSIX the watchdog is
 * started with `Bun.spawn` and each line flushed; elsewhere (Node, Deno, Windows, where the
 * watchdog must also leave the job object the runtime puts children in) through child_process.
 * On POSIX it runs from `/` with only the absolute entries of the host's PATH: it runs unconfined
 * (`sleep`, `date`), and a relative entry such as `node_modules/.bin` would otherwise find what a
 * confined entry may have written into the project.
 */
import { spawn } from "node:child_process";
import process from "node:process";
import { pathDirs } from "../platform/which.ts";

export interface WatchdogLink {
  /** The watchdog's pid; undefined when it could not be started. */
  readonly pid: number | undefined;
  /** Write `line` (with its newline) to the watchdog's stdin now; false when the pipe is gone. */
  send(line: string): boolean;
  /** Close the pipe (the watchdog reads EOF); resolves once closed, or after a second. */
  close(): Promise<void>;
}

export interface WatchdogEvents {
  /** It could not be started (`pid` is undefined). */
  failed(err: Error): void;
  /** It has exited. */
  exited(): void;
}

interface BunSink {
  write(chunk: string): number;
  flush(): number | Promise<number>;
  end(): number | Promise<number>;
  unref(): void;
}
interface BunProcess {
  pid: number;
  stdin: BunSink;
  exited: Promise<number>;
  unref(): void;
}
interface BunSpawn {
  spawn(argv: string[], opts: {
    stdin: "pipe";
    stdout: "ignore";
    stderr: "inherit";
    env: Record<string, string | undefined>;
    cwd?: string;
    detached: boolean;
  }): BunProcess;
}
const bun = (globalThis as unknown as { Bun?: BunSpawn }).Bun;

/** Start the watchdog `argv` in its own session, told nothing yet. */
export function startWatchdogLink(argv: string[], events: WatchdogEvents): WatchdogLink {
  return bun && process.platform !== "win32" ? bunLink(bun, argv, events) : nodeLink(argv, events);
}

const posix = process.platform !== "win32";

/** The watchdog's environment: hermit's, with only the absolute entries of PATH on POSIX. Pure. */
export function watchdogEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  if (posix && out.PATH !== undefined) out.PATH = pathDirs(out.PATH, false).join(":") || "/usr/bin:/bin";
  return out;
}

/** Where the watchdog runs: `/` on POSIX (nothing relative resolves into the project). */
const WATCHDOG_CWD = posix ? "/" : undefined;

function bunLink(b: BunSpawn, argv: string[], events: WatchdogEvents): WatchdogLink {
  let child: BunProcess;
  try {
    child = b.spawn(argv, {
      stdin: "pipe",
      stdout: "ignore",
      stderr: "inherit",
      env: watchdogEnv(process.env),
      cwd: WATCHDOG_CWD,
      detached: true,
    });
  } catch (err) {
    queueMicrotask(() => events.failed(err as Error));
    return { pid: undefined, send: () => false, close: () => Promise.resolve() };
  }
  let open = true;
  child.exited.then(() => {
    open = false;
    events.exited();
  }, () => events.exited());
  child.unref();
  child.stdin.unref();
  return {
    pid: child.pid,
    send(line) {
      if (!open) return false;
      try {
        child.stdin.write(line + "\n");
        const flushed = child.stdin.flush();
        if (flushed instanceof Promise) flushed.catch(() => {/* gone: the exit handler restarts it */});
        return true;
      } catch {
        return (open = false);
      }
    },
    close() {
      if (!open) return Promise.resolve();
      open = false;
      try {
        return Promise.race([
          Promise.resolve(child.stdin.end()).then(() => {}, () => {}),
          new Promise<void>((r) => setTimeout(r, 1000)),
        ]);
      } catch {
        return Promise.resolve();
      }
    },
  };
}

function nodeLink(argv: string[], events: WatchdogEvents): WatchdogLink {
  const [cmd, ...args] = argv;
  const child = spawn(cmd, args, {
    // Own session on POSIX. On Windows, outside the kill-on-close job object the runtime (libuv)
    // puts children in: that job ends hermit's direct children with it, but not their children,
    // and the watchdog must outlive hermit to end those.
    detached: true,
    stdio: ["pipe", "ignore", "inherit"],
    env: watchdogEnv(process.env),
    cwd: WATCHDOG_CWD,
    windowsHide: true,
  });
  child.on("error", (err) => {
    if (child.pid === undefined) events.failed(err); // else a failed write or kill, not a failed start
  });
  child.stdin?.on("error", () => {/* the watchdog went away; the exit handler restarts it */});
  child.once("exit", () => events.exited());
  child.unref();
  (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  return {
    pid: child.pid,
    send(line) {
      if (!child.stdin || child.stdin.destroyed) return false;
      child.stdin.write(line + "\n");
      return true;
    },
    close() {
      const stdin = child.stdin;
      if (!stdin || stdin.destroyed) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 1000);
        stdin.end(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}
