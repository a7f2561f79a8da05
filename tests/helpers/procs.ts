/**
 * Process helpers for tests: polling and waiting with a deadline, process inspection through /proc
 * (trees, groups, command lines and environments), and cleanup of every process a test started (by
 * pid), so runs can repeat and overlap.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import process from "node:process";
import type { RunResult } from "./hermit.ts";

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Poll `fn` until it returns a truthy value; throws naming `what` after `timeoutMs`. A function
 * `what` is called at the deadline, so it can report the state then (stderr so far, what is left).
 */
export async function waitFor<T>(
  fn: () => T | Promise<T>,
  opts: { timeoutMs?: number; intervalMs?: number; what: string | (() => string) },
): Promise<NonNullable<T>> {
  const deadline = Date.now() + (opts.timeoutMs ?? 10000);
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    await sleep(opts.intervalMs ?? 50);
  }
  throw new Error(
    `timed out after ${opts.timeoutMs ?? 10000} ms waiting for ${
      typeof opts.what === "function" ? opts.what() : opts.what
    }${last ? ` (last error: ${last})` : ""}`,
  );
}

export interface Stat {
  pid: number;
  /** R, S, D, Z (zombie), X (dead), … */
  state: string;
  ppid: number;
  pgid: number;
  /** Session id. */
  sid: number;
}

/** When `pid` started (clock ticks since boot), or undefined when there is no such process. */
function startTime(pid: number): string | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, "utf8");
    return s.slice(s.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

/** One process's /proc/PID/stat, or undefined when there is no such process. */
export function stat(pid: number): Stat | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
    return { pid, state: f[0], ppid: Number(f[1]), pgid: Number(f[2]), sid: Number(f[3]) };
  } catch {
    return undefined;
  }
}

export function allProcesses(): Stat[] {
  return readdirSync("/proc").filter((d) => /^\d+$/.test(d)).map((d) => stat(Number(d))).filter((
    s,
  ): s is Stat => !!s);
}

export function alive(pid: number): boolean {
  const s = stat(pid);
  return !!s && s.state !== "Z" && s.state !== "X";
}

/** Live descendants of `pid` (children, grandchildren, …). */
export function descendants(pid: number): number[] {
  const procs = allProcesses().filter((p) => p.state !== "Z");
  const out: number[] = [];
  const frontier = [pid];
  while (frontier.length) {
    const p = frontier.pop()!;
    for (const c of procs) {
      if (c.ppid === p && !out.includes(c.pid)) {
        out.push(c.pid);
        frontier.push(c.pid);
      }
    }
  }
  return out;
}

/** Live processes in group `pgid`. */
export function groupMembers(pgid: number): number[] {
  return allProcesses().filter((p) => p.pgid === pgid && p.state !== "Z").map((p) => p.pid);
}

/**
 * Resolve with everything read from `stream` once it contains `text`; reject after `timeoutMs`
 * or when the stream ends first.
 */
export function readUntil(
  stream: NodeJS.ReadableStream,
  text: string,
  timeoutMs = 10000,
): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = "";
    const done = (err?: Error) => {
      clearTimeout(timer);
      stream.off("data", onData);
      stream.off("end", onEnd);
      if (err) reject(err);
      else resolve(seen);
    };
    const onData = (d: Buffer | string) => {
      seen += d.toString();
      if (seen.includes(text)) done();
    };
    const onEnd = () => done(new Error(`stream ended before '${text}'; got: ${seen}`));
    const timer = setTimeout(
      () => done(new Error(`timed out after ${timeoutMs} ms waiting for '${text}'; got: ${seen}`)),
      timeoutMs,
    );
    stream.on("data", onData);
    stream.on("end", onEnd);
  });
}

export function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ").trim();
  } catch {
    return "";
  }
}

/** The environment block of `pid` (NUL-separated KEY=VALUE entries), or "" when unreadable. */
function environ(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/environ`, "utf8");
  } catch {
    return "";
  }
}

/**
 * Live processes other than this one whose command line contains `match.cmdline` and whose
 * environment block (NUL-separated KEY=VALUE entries) contains `match.environ`; a criterion left
 * out matches everything.
 */
export function processesWhere(match: { cmdline?: string; environ?: string }): number[] {
  return allProcesses()
    .filter((p) => p.state !== "Z" && p.state !== "X" && p.pid !== process.pid)
    .map((p) => p.pid)
    .filter((pid) =>
      (match.cmdline === undefined || cmdline(pid).includes(match.cmdline)) &&
      (match.environ === undefined || environ(pid).includes(match.environ))
    );
}

export function kill(pid: number, signal: NodeJS.Signals = "SIGKILL"): void {
  try {
    process.kill(pid, signal);
  } catch { /* already gone */ }
}

/** Wait for `child` to end, feeding `input`; SIGKILL and reject after `timeoutMs`. */
export function collect(
  child: ChildProcess,
  input: string | undefined,
  timeoutMs: number,
  what: string,
): Promise<RunResult> {
  return new Promise<RunResult>((resolve, reject) => {
    let stdout = "";
    let stderr = "";
    child.stdout!.setEncoding("utf8").on("data", (d) => (stdout += d));
    child.stderr!.setEncoding("utf8").on("data", (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`timed out after ${timeoutMs} ms: ${what}\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.on("error", (e) => (clearTimeout(timer), reject(e)));
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    child.stdin?.on("error", () => {/* it may not read everything */});
    child.stdin?.end(input ?? "");
  });
}

/**
 * Remembers pids (and their descendants at cleanup time) and process groups, and kills them all
 * at the end; a tracked pid that has since been reused by another process is left alone.
 */
export class Reaper {
  /** pid → its start time when tracked, so a pid reused by then is left alone. */
  #pids = new Map<number, string | undefined>();
  #groups = new Set<number>();
  track(pid: number | undefined): void {
    if (pid && !this.#pids.has(pid)) this.#pids.set(pid, startTime(pid));
  }
  /** Also kill every process left in group `pgid` (orphans that are no one's descendants). */
  trackGroup(pgid: number | undefined): void {
    if (pgid && pgid > 1) this.#groups.add(pgid);
  }
  /** Kill every tracked process, its descendants and tracked groups, and wait until they are gone. */
  async reap(): Promise<void> {
    const all = new Set<number>();
    for (const [pid, start] of this.#pids) {
      if (startTime(pid) !== start) continue; // gone, or someone else's now
      all.add(pid);
      for (const d of descendants(pid)) all.add(d);
    }
    for (const pgid of this.#groups) {
      for (const p of groupMembers(pgid)) {
        all.add(p);
        for (const d of descendants(p)) all.add(d);
      }
    }
    for (const pid of all) kill(pid);
    await waitFor(() => [...all].every((p) => !alive(p)), {
      timeoutMs: 5000,
      what: "tracked processes to exit",
    })
      .catch(() => {});
    this.#pids.clear();
    this.#groups.clear();
  }
}

/**
 * A process group of its own that the test owns (tracked by `reaper`): a sh -c wrapper and two
 * sleeps, optionally ignoring SIGTERM; resolves with its id once all three run.
 */
export async function sleepingGroup(
  reaper: Reaper,
  ignoreTerm = false,
  env?: Record<string, string>,
): Promise<number> {
  const trap = ignoreTerm ? "trap '' TERM; " : "";
  const child = spawn("sh", ["-c", `${trap}sleep 1000 & sleep 1000 & echo ready; wait`], {
    detached: true,
    stdio: ["ignore", "pipe", "ignore"],
    env: env && { ...process.env, ...env },
  });
  reaper.track(child.pid);
  reaper.trackGroup(child.pid);
  await readUntil(child.stdout!, "ready");
  child.stdout!.destroy();
  child.unref();
  await waitFor(() => groupMembers(child.pid!).length === 3, {
    what: `three processes in group ${child.pid}`,
  });
  return child.pid!;
}
