/**
 * The test helpers the e2e suites rely on for isolation and cleanup, against the compiled binary:
 * hermit runs with the test process's own HERMIT_HOME unless a test sets one; a service whose endpoint
 * never comes is killed, not leaked; waitFor reports the state at its deadline; processesWhere
 * finds processes by command line and environment.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { hermitEnv, runHermit, testHome } from "../helpers/hermit.ts";
import { processesWhere, Reaper, sleep, waitFor } from "../helpers/procs.ts";
import { servicePids, startService, writeStandaloneAdapter } from "../helpers/service.ts";
import { tempDir } from "../helpers/tmp.ts";

describe("test helpers", () => {
  const tmp = tempDir("hermit-helpers-");
  const reaper = new Reaper();
  after(async () => {
    for (const p of servicePids(tmp.path)) reaper.track(p);
    await reaper.reap();
    tmp.cleanup();
  });

  it("hermit gets the test process's own HERMIT_HOME, not the inherited one, unless the test sets one", async () => {
    const home = testHome();
    assert.equal(testHome(), home, "one per test process");
    assert.equal(path.dirname(home), os.tmpdir());
    assert.notEqual(home, process.env.HERMIT_HOME);
    assert.equal(hermitEnv().HERMIT_HOME, home);
    assert.equal(hermitEnv({ ...process.env, HERMIT_HOME: "/elsewhere" }).HERMIT_HOME, "/elsewhere");

    const dir = path.join(tmp.path, "listed");
    mkdirSync(dir);
    writeStandaloneAdapter(dir);
    const cached = () =>
      existsSync(path.join(home, "schema-cache")) ? readdirSync(path.join(home, "schema-cache")).length : 0;
    const before = cached();
    const r = await runHermit(["tools", dir]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(cached(), before + 1, "runHermit: the listing (a new adapter's) cached there");

    const svc = await startService(dir, {}, { reaper });
    const environ = readFileSync(`/proc/${svc.pid}/environ`, "utf8").split("\0");
    assert.ok(environ.includes(`HERMIT_HOME=${home}`), "startService");
    await svc.stop();
  });

  it("startService kills the service when its endpoint file does not come in time", async () => {
    const dir = path.join(tmp.path, "slow");
    mkdirSync(dir);
    writeStandaloneAdapter(dir);
    await assert.rejects(
      startService(dir, {}, { timeoutMs: 1 }),
      /timed out after 1 ms waiting for the service's endpoint/,
    );
    await waitFor(() => servicePids(dir).length === 0, {
      timeoutMs: 10_000,
      what: () => `the service to be killed (left: ${servicePids(dir).join(", ")})`,
    });
  });

  it("waitFor reports the state at its deadline when `what` is a function", async () => {
    let state = "at the call";
    const waiting = waitFor(() => false, { timeoutMs: 200, what: () => `something (${state})` });
    await sleep(50);
    state = "at the deadline";
    await assert.rejects(waiting, /waiting for something \(at the deadline\)/);
  });

  it("processesWhere matches the command line and the environment", async () => {
    const marker = `HERMIT_HELPERS_MARKER=${path.basename(tmp.path)}`;
    const child = spawn("node", ["-e", "setInterval(() => {}, 1000)", path.basename(tmp.path)], {
      env: { ...process.env, HERMIT_HELPERS_MARKER: path.basename(tmp.path) },
      stdio: "ignore",
    });
    reaper.track(child.pid);
    await waitFor(() => processesWhere({ environ: `${marker}\0` }).length > 0, {
      what: "the process to start",
    });
    assert.deepEqual(processesWhere({ cmdline: path.basename(tmp.path), environ: `${marker}\0` }), [
      child.pid,
    ]);
    assert.deepEqual(processesWhere({ cmdline: "no such command line", environ: `${marker}\0` }), []);
    assert.deepEqual(processesWhere({ cmdline: path.basename(tmp.path), environ: `${marker}x\0` }), []);
  });
});
