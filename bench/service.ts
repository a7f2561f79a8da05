/**
 * The long-running processes the bench's relay rows attach to: hermit's standalone service and
 * supergateway. A start polls for readiness with a deadline and fails, with the process's stderr,
 * as soon as the process exits; a stop signals the process (or its whole group) and waits for the
 * exit, so the next section can start a service for the same adapter.
 */
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import path from "node:path";
import process from "node:process";
import { sleep } from "./lib.ts";

export interface Background {
  pid: number;
  /** Where it answers MCP (Streamable HTTP). */
  url: string;
  /** SIGTERM (SIGKILL after a grace period), then wait for the exit; a no-op once it has exited. */
  stop(): Promise<void>;
}

const READY_WITHIN_MS = 60_000;
const STOP_GRACE_MS = 10_000;
const STDERR_KEPT = 4000;

interface Launched {
  pid: number;
  stdout(): string;
  /** Why it is no longer running, with the end of its stderr; undefined while it runs. */
  ended(): string | undefined;
  stop(): Promise<void>;
}

function launch(command: string, args: string[], group: boolean): Launched {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], detached: group });
  let out = "";
  let err = "";
  let why: string | undefined;
  child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (err = (err + d).slice(-STDERR_KEPT)));
  const exited = new Promise<void>((resolve) => {
    child.once("error", (e) => (why ??= e.message, resolve()));
    child.once("exit", (code, signal) => (why ??= `exit ${code ?? signal}`, resolve()));
  });
  const signal = (sig: NodeJS.Signals) => {
    try {
      process.kill(group ? -child.pid! : child.pid!, sig);
    } catch { /* gone */ }
  };
  return {
    pid: child.pid ?? 0,
    stdout: () => out,
    ended: () => {
      if (why === undefined) return undefined;
      const tail = err.trim().split("\n").filter((l) => l.trim()).slice(-3).join(" / ");
      return tail ? `${why}; stderr: ${tail}` : why;
    },
    async stop() {
      if (why !== undefined) return;
      signal("SIGTERM");
      let timer: ReturnType<typeof setTimeout> | undefined;
      const graceOver = new Promise<boolean>((r) => (timer = setTimeout(() => r(true), STOP_GRACE_MS)));
      const killed = await Promise.race([exited.then(() => false), graceOver]);
      clearTimeout(timer);
      if (killed) signal("SIGKILL");
      await exited;
    },
  };
}

/** Poll `ready` every 50 ms until it holds; fail when the process exits or the deadline passes. */
async function readyOrFail(
  what: string,
  p: Launched,
  ready: () => boolean | Promise<boolean>,
): Promise<void> {
  const end = Date.now() + READY_WITHIN_MS;
  while (!(await ready())) {
    if (p.ended() !== undefined) {
      await sleep(100); // the last stderr lines may still be in the pipe
      throw new Error(`${what} exited before it was ready (${p.ended()})`);
    }
    if (Date.now() > end) {
      await p.stop();
      throw new Error(`${what} was not ready within ${READY_WITHIN_MS / 1000} s (${p.ended()})`);
    }
    await sleep(50);
  }
}

/** `hermit serve DIR --standalone`, ready once it prints its endpoint. */
export async function startService(hermit: string, adapter: string): Promise<Background> {
  const p = launch(hermit, ["serve", adapter, "--standalone"], false);
  const endpoint = () => /http:\/\/\S+\/mcp/.exec(p.stdout())?.[0];
  await readyOrFail(`hermit serve ${path.basename(adapter)} --standalone`, p, () => !!endpoint());
  return { pid: p.pid, url: endpoint()!, stop: p.stop };
}

/** supergateway in its own process group: stateful Streamable HTTP in front of `node server`. */
export async function startSupergateway(root: string, server: string): Promise<Background> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/mcp`;
  const p = launch("node", [
    path.join(root, "node_modules", "supergateway", "dist", "index.js"),
    "--stdio",
    `node ${server}`,
    "--outputTransport",
    "streamableHttp",
    "--stateful",
    "--port",
    String(port),
    "--logLevel",
    "none",
  ], true);
  await readyOrFail("supergateway", p, () => answers(url));
  return { pid: p.pid, url, stop: p.stop };
}

async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
    await res.body?.cancel();
    return true;
  } catch {
    return false;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}
