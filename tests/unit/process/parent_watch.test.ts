/**
 * Watching the parent process with real processes: `watchParent` (`src/process/parent.ts`) by
 * identity for a process that is not our parent, and a stdio session's `sessionEnd`
 * (`src/mcp/session.ts`), which must end when its host dies and then leave nothing running
 * (its poll stopped), so the session process can exit; `hostEnd` (`src/process/host_end.ts`)
 * takes each stop signal once and gives them back when stopped.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { pathToFileURL } from "node:url";
import { watchParent } from "../../../src/process/parent.ts";
import { root } from "../../helpers/hermit.ts";
import { alive, readUntil, Reaper, waitFor } from "../../helpers/procs.ts";
import { tempDir } from "../../helpers/tmp.ts";

const reaper = new Reaper();
const dir = tempDir("hermit-parent-");
after(async () => {
  await reaper.reap();
  dir.cleanup();
});

const hostEndModule = pathToFileURL(path.join(root, "src/process/host_end.ts")).href;

function runtimeArgv(script: string): string[] {
  const deno = (globalThis as unknown as { Deno?: { execPath(): string } }).Deno;
  if (deno) {
    return [deno.execPath(), "run", "-A", "--no-check", "--config", path.join(root, "deno.json"), script];
  }
  return [process.execPath, script];
}

describe("watching the parent", { timeout: 60_000 }, () => {
  it("watchParent: a process that is not our parent is gone once it has exited", async () => {
    const child = spawn("sleep", ["1000"], { stdio: "ignore" });
    reaper.track(child.pid);
    const gone = watchParent(child.pid!);
    assert.equal(gone(), undefined);
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    assert.equal(gone(), `parent ${child.pid} is gone`);
  });

  it("watchParent: no parent known (pid 0, as under Wine) is never gone", () => {
    assert.equal(watchParent(0)(), undefined);
  });

  it("sessionEnd: the host's death ends the session, and its poll stops with it", async () => {
    const script = path.join(dir.path, "session.mjs");
    const session = pathToFileURL(path.join(root, "src/mcp/session.ts")).href;
    writeFileSync(
      script,
      `import { sessionEnd } from ${JSON.stringify(session)};\n` +
        `import { hostEnd } from ${JSON.stringify(hostEndModule)};\n` +
        `const ended = sessionEnd({}, hostEnd({ pollMs: 20 }).ended);\n` +
        `console.log("watching");\n` +
        `console.log("ended: " + (await ended).text);\n`,
    );
    // sh stands in for the host: it starts the session, then is killed
    const argv = ["-c", '"$@" & echo "pid $!"; exec sleep 1000', "sh", ...runtimeArgv(script)];
    const host = spawn("sh", argv, { cwd: root, stdio: ["ignore", "pipe", "inherit"] });
    reaper.track(host.pid);
    const pid = Number(/pid (\d+)/.exec(await readUntil(host.stdout!, "watching", 30_000))![1]);
    reaper.track(pid);
    process.kill(host.pid!, "SIGKILL");
    const out = await readUntil(host.stdout!, "ended: ", 20_000);
    assert.match(out, /ended: the host process is gone \(parent \d+ is gone\)/);
    await waitFor(() => !alive(pid), { what: "the session process to exit on its own", timeoutMs: 10_000 });
  });

  it("hostEnd: a signal ends it, and after stop the next one ends the process as it would without hermit", async () => {
    const script = path.join(dir.path, "signals.mjs");
    writeFileSync(
      script,
      `import { hostEnd } from ${JSON.stringify(hostEndModule)};\n` +
        `const host = hostEnd({ hostGone: () => undefined, pollMs: 20 });\n` +
        `console.log("watching");\n` +
        `console.log("ended: " + (await host.ended).text);\n` +
        `host.stop();\n` +
        `console.log("stopped");\n` +
        `setTimeout(() => console.log("not ended by the second signal"), 20000);\n`,
    );
    const child = spawn(runtimeArgv(script)[0], runtimeArgv(script).slice(1), {
      cwd: root,
      stdio: ["ignore", "pipe", "inherit"],
    });
    reaper.track(child.pid);
    const exited = new Promise<NodeJS.Signals | number | null>((r) =>
      child.once("exit", (c, s) => r(s ?? c))
    );
    await readUntil(child.stdout!, "watching", 30_000);
    process.kill(child.pid!, "SIGHUP");
    assert.match(await readUntil(child.stdout!, "stopped", 20_000), /ended: received SIGHUP/);
    process.kill(child.pid!, "SIGTERM");
    const late = new Promise((r) => setTimeout(() => r("still running 15 s later"), 15_000).unref());
    assert.equal(await Promise.race([exited, late]), "SIGTERM");
  });
});
