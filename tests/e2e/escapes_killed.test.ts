/**
 * A daemon a command tool starts with `setsid` right before serve is killed outright: serve looks
 * for escapes once a second, so it never saw this one and the watchdog was never told of its
 * group. The watchdog still takes it, by the group tag in its environment (`HERMIT_GROUP_TAG`,
 * which every child of hermit gets): both watchdogs, the sh one serve starts by default and
 * hermit's own; and the standalone service's, killed the same way. Linux: inspects /proc.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import process from "node:process";
import path from "node:path";
import { hermitBin, hermitEnv } from "../helpers/hermit.ts";
import { connectHttp, startService } from "../helpers/service.ts";
import { alive, kill, Reaper, waitFor } from "../helpers/procs.ts";
import { tempDir } from "../helpers/tmp.ts";

/** The default grace (3 s) plus room for a loaded machine. */
const GONE_WITHIN_MS = 3000 + 5000;

const MANIFEST = `name: killed
exports: { tools: [stay] }
serve: { lifecycle: SERVE }
tools:
  stay:
    description: starts a daemon, then keeps running
    input: { type: object }
    run: [sh, -c, "setsid sh -c 'echo $$ > daemon.pid.tmp && mv daemon.pid.tmp daemon.pid; exec sleep 1000' & sleep 60"]
    timeout: 60
`;

describe("a setsid daemon started right before serve is killed outright", { timeout: 120_000 }, () => {
  const tmp = tempDir("hermit-escapes-killed-");
  const reaper = new Reaper();
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  for (const watchdog of ["sh", "hermit"] as const) {
    it(`is taken by the watchdog (${watchdog}) though serve never saw it`, async () => {
      const dir = path.join(tmp.path, watchdog);
      mkdirSync(dir);
      writeFileSync(path.join(dir, "hermit.yaml"), MANIFEST.replace("SERVE", "session"));
      const env = { ...process.env, ...(watchdog === "hermit" ? { HERMIT_WATCHDOG: "hermit" } : {}) };
      const child = spawn(hermitBin(), ["serve", dir], {
        cwd: dir,
        env: hermitEnv(env) as Record<string, string>,
        stdio: ["pipe", "ignore", "pipe"],
      });
      reaper.track(child.pid);
      let stderr = "";
      child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
      const send = (m: unknown) => child.stdin.write(JSON.stringify(m) + "\n");
      send({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } },
      });
      send({ jsonrpc: "2.0", method: "notifications/initialized" });
      send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "stay", arguments: {} } });
      const file = path.join(dir, "daemon.pid");
      await waitFor(() => existsSync(file), {
        timeoutMs: 30_000,
        intervalMs: 2,
        what: () => `the daemon's pid in ${file} (stderr: ${stderr})`,
      });
      kill(child.pid!, "SIGKILL"); // at once: serve's look for escapes comes once a second
      const pid = Number(readFileSync(file, "utf8").trim());
      reaper.track(pid);
      assert.ok(pid > 1, "the daemon wrote its pid");
      await waitFor(() => !alive(pid), {
        timeoutMs: GONE_WITHIN_MS,
        what: () => `the daemon ${pid} to be gone after kill -9 of serve (stderr: ${stderr})`,
      });
    });
  }

  it("is taken by the standalone service's watchdog when the service is killed outright", async () => {
    const dir = path.join(tmp.path, "standalone");
    mkdirSync(dir);
    writeFileSync(path.join(dir, "hermit.yaml"), MANIFEST.replace("SERVE", "standalone"));
    const svc = await startService(dir, {}, { reaper });
    const client = await connectHttp(svc);
    void client.callTool({ name: "stay", arguments: {} }).catch(() => {});
    const file = path.join(dir, "daemon.pid");
    await waitFor(() => existsSync(file), {
      timeoutMs: 30_000,
      intervalMs: 2,
      what: () => `the daemon's pid in ${file} (stderr: ${svc.stderr()})`,
    });
    kill(svc.pid, "SIGKILL");
    const pid = Number(readFileSync(file, "utf8").trim());
    reaper.track(pid);
    await waitFor(() => !alive(pid), {
      timeoutMs: GONE_WITHIN_MS,
      what: () => `the daemon ${pid} to be gone after kill -9 of the service (stderr: ${svc.stderr()})`,
    });
    await client.close().catch(() => {});
  });
});
