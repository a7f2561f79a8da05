/**
 * `src/process/exit_status.ts`: one shell-style status from whatever reported how a process ended:
 * the runtime's (code, signal) pair, a shell's 126/127/128+n convention, or a spawn error.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { exitStatusOf, spawnErrorStatus } from "../../../src/process/exit_status.ts";

const errno = (code: string, message = code): NodeJS.ErrnoException =>
  Object.assign(new Error(message), { code });

describe("exitStatusOf", () => {
  it("a normal exit keeps its code", () => {
    assert.deepEqual(exitStatusOf(0, null), { code: 0, reason: "exited normally" });
    assert.deepEqual(exitStatusOf(3, null), { code: 3, reason: "exited with 3" });
    assert.deepEqual(exitStatusOf(255, null), { code: 255, reason: "exited with 255" });
  });

  it("a signal becomes 128 + its number", () => {
    assert.deepEqual(exitStatusOf(null, "SIGKILL"), {
      code: 137,
      signal: "SIGKILL",
      reason: "killed by SIGKILL",
    });
    assert.deepEqual(exitStatusOf(null, "SIGTERM"), {
      code: 143,
      signal: "SIGTERM",
      reason: "killed by SIGTERM",
    });
    assert.equal(exitStatusOf(null, "SIGINT").code, 130);
    assert.equal(exitStatusOf(null, "SIGHUP").code, 129);
    assert.equal(exitStatusOf(null, "SIGSEGV").code, 139);
  });

  it("the signal wins when a runtime reports both", () => {
    assert.equal(exitStatusOf(0, "SIGKILL").code, 137);
  });

  it("no code and no signal counts as a normal exit", () => {
    assert.equal(exitStatusOf(null, null).code, 0);
  });

  it("126 and 127 are a shell's 'not executable' and 'not found'", () => {
    assert.deepEqual(exitStatusOf(126, null), { code: 126, reason: "command not executable (126)" });
    assert.deepEqual(exitStatusOf(127, null), { code: 127, reason: "command not found (127)" });
  });

  it("128 + n from a shell names the signal that ended its child", () => {
    assert.deepEqual(exitStatusOf(137, null), {
      code: 137,
      signal: "SIGKILL",
      reason: "exited with 137 (SIGKILL)",
    });
    assert.deepEqual(exitStatusOf(143, null), {
      code: 143,
      signal: "SIGTERM",
      reason: "exited with 143 (SIGTERM)",
    });
  });

  it("128 itself and codes past any signal are plain codes", () => {
    assert.deepEqual(exitStatusOf(128, null), { code: 128, reason: "exited with 128" });
    assert.deepEqual(exitStatusOf(200, null), { code: 200, reason: "exited with 200" });
  });

  it("a shell's 128 + n names the same signal the runtime reported", () => {
    // SIGABRT and SIGIOT share 6: the first name, SIGABRT, is the one read back
    for (const sig of ["SIGHUP", "SIGINT", "SIGQUIT", "SIGABRT", "SIGKILL", "SIGTERM", "SIGUSR1"]) {
      const direct = exitStatusOf(null, sig);
      assert.ok(direct.code > 128, `${sig}: ${direct.code}`);
      assert.deepEqual(exitStatusOf(direct.code, null), {
        code: direct.code,
        signal: sig,
        reason: `exited with ${direct.code} (${sig})`,
      });
    }
  });
});

describe("spawnErrorStatus", () => {
  it("ENOENT is 127, command not found", () => {
    assert.deepEqual(spawnErrorStatus("nope", errno("ENOENT")), {
      code: 127,
      reason: "command not found: nope",
    });
  });

  it("EACCES is 126, command not executable", () => {
    assert.deepEqual(spawnErrorStatus("/etc/passwd", errno("EACCES")), {
      code: 126,
      reason: "command not executable: /etc/passwd",
    });
  });

  it("ENOEXEC is 126: the file is neither a program nor a #! script", () => {
    const s = spawnErrorStatus("./data.bin", errno("ENOEXEC"));
    assert.equal(s.code, 126);
    assert.match(s.reason, /^command not executable: \.\/data\.bin/);
  });

  it("any other error is 126 (found but cannot run), with the error's message", () => {
    const s = spawnErrorStatus("x", errno("E2BIG", "spawn E2BIG"));
    assert.equal(s.code, 126);
    assert.equal(s.reason, "cannot start x: spawn E2BIG");
  });
});
