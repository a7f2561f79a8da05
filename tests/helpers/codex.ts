/**
 * A real Codex answering "which MCP servers do you have, with which tools": `codex app-server`
 * (newline-delimited JSON-RPC over stdio, no login needed) → initialize → thread/start in the
 * project (so project config and trust apply) → mcpServerStatus/list, which starts each server.
 * hermit's state is hermitEnv's HERMIT_HOME unless `opts.env` sets one. The whole process group is
 * killed afterwards (and tracked by `opts.reaper` when given).
 */
import { spawn } from "node:child_process";
import process from "node:process";
import { hermitEnv } from "./hermit.ts";
import type { Reaper } from "./procs.ts";

export interface McpServerStatus {
  name: string;
  tools: Record<string, unknown> | null;
  toolsError?: string | null;
}

export function codexServerStatus(
  codex: string,
  opts: { cwd: string; env: Record<string, string | undefined>; timeoutMs?: number; reaper?: Reaper },
): Promise<McpServerStatus[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(codex, ["app-server"], {
      cwd: opts.cwd,
      env: hermitEnv(opts.env) as Record<string, string>,
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    opts.reaper?.track(child.pid);
    opts.reaper?.trackGroup(child.pid);
    let stderr = "";
    let buf = "";
    const finish = (err: Error | undefined, value?: McpServerStatus[]) => {
      clearTimeout(timer);
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch { /* gone */ }
      if (err) reject(err);
      else resolve(value!);
    };
    const timer = setTimeout(
      () => finish(new Error(`codex app-server gave no answer in time; stderr: ${stderr.slice(-2000)}`)),
      opts.timeoutMs ?? 90_000,
    );
    const send = (msg: unknown) => child.stdin.write(JSON.stringify(msg) + "\n");
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
    child.on("error", (e) => finish(e));
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      buf += d;
      for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        let msg: { id?: number; result?: Record<string, unknown>; error?: unknown };
        try {
          msg = JSON.parse(line);
        } catch {
          continue;
        }
        if (msg.error) return finish(new Error(`codex app-server: ${JSON.stringify(msg.error)}`));
        if (msg.id === 1) {
          send({ method: "initialized", params: {} });
          send({ id: 2, method: "thread/start", params: { cwd: opts.cwd, ephemeral: true } });
        } else if (msg.id === 2) {
          const thread = msg.result?.thread as { id?: string } | undefined;
          send({
            id: 3,
            method: "mcpServerStatus/list",
            params: { detail: "toolsAndAuthOnly", limit: 50, threadId: thread?.id },
          });
        } else if (msg.id === 3) {
          finish(undefined, (msg.result?.data ?? []) as McpServerStatus[]);
        }
      }
    });
    send({
      id: 1,
      method: "initialize",
      params: { clientInfo: { name: "hermit-tests", version: "0" }, capabilities: { experimentalApi: true } },
    });
  });
}
