/**
 * The test as a host on a relay: `hermit serve DIR ARGS` from the compiled binary with raw JSON-RPC
 * on its stdio (stdin held open, as a real host's is, until the test ends it), in this process's
 * environment without its HERMIT_SERVE_TOKEN plus `env`, tracked by the reaper from its spawn.
 */
import { type ChildProcess, spawn } from "node:child_process";
import process from "node:process";
import { hermitBin, hermitEnv } from "./hermit.ts";
import { type Reaper, waitFor } from "./procs.ts";

export type Message = {
  id?: number | string;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
};

export const initializeRequest = (id: number | string = 1) => ({
  jsonrpc: "2.0",
  id,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } },
});
export const initializedNotification = { jsonrpc: "2.0", method: "notifications/initialized" };

export interface Host {
  child: ChildProcess;
  send(m: unknown): void;
  /** The answer to request `id`, once it came (polled, failing after `timeoutMs`). */
  answer(id: number, timeoutMs?: number): Promise<Message>;
  /** Resolves with the exit code once the relay exits. */
  exited: Promise<number | null>;
  stderr(): string;
}

export function startHost(
  dir: string,
  args: string[],
  opts: { reaper: Reaper; env?: Record<string, string | undefined> },
): Host {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== "HERMIT_SERVE_TOKEN"));
  const child = spawn(hermitBin(), ["serve", dir, ...args], {
    env: hermitEnv({ ...base, ...opts.env }) as Record<string, string>,
    stdio: ["pipe", "pipe", "pipe"],
  });
  opts.reaper.track(child.pid);
  const messages: Message[] = [];
  let out = "";
  let err = "";
  child.stdout!.setEncoding("utf8").on("data", (d) => {
    out += d;
    for (let nl = out.indexOf("\n"); nl >= 0; nl = out.indexOf("\n")) {
      messages.push(JSON.parse(out.slice(0, nl)));
      out = out.slice(nl + 1);
    }
  });
  child.stderr!.setEncoding("utf8").on("data", (d) => (err += d));
  child.stdin!.on("error", () => {/* the relay may be gone */});
  return {
    child,
    send: (m) => child.stdin!.write(JSON.stringify(m) + "\n"),
    answer: (id, timeoutMs = 60_000) =>
      waitFor(() => messages.find((m) => m.id === id), {
        timeoutMs,
        what: () => `the answer to request ${id} (stderr: ${err})`,
      }),
    exited: new Promise((resolve) => child.once("exit", (code) => resolve(code))),
    stderr: () => err,
  };
}
