/**
 * The machine-wide locks in hermit's state directory (deploy and convert; add and lock writing an
 * adapter): the directory made when missing; a folder where the lock file goes, a state directory
 * that cannot be made, and a lock held elsewhere each one line naming what to do.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { HermitError } from "../../../src/errors.ts";
import { stateLock } from "../../../src/platform/state_lock.ts";
import { tempDir } from "../../helpers/tmp.ts";

async function refused(p: Promise<unknown>, re: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof HermitError, String(err));
    assert.match(err.message, re);
    return true;
  });
}

describe("stateLock", () => {
  it("makes the state directory and takes the lock; a second taker is told who holds it", async () => {
    const tmp = tempDir();
    try {
      const dir = path.join(tmp.path, "state", "hermit");
      const lock = await stateLock(dir, "deploy.lock", 1000, "another hermit deploy is running");
      try {
        await refused(
          stateLock(dir, "deploy.lock", 100, "another hermit deploy is running"),
          /^another hermit deploy is running \(lock .*deploy\.lock\); try again$/,
        );
      } finally {
        lock.release();
      }
      (await stateLock(dir, "deploy.lock", 1000, "busy")).release();
    } finally {
      tmp.cleanup();
    }
  });

  it("a folder where the lock goes: 'cannot open the lock … ; remove it', not a crash", async () => {
    const tmp = tempDir();
    try {
      mkdirSync(path.join(tmp.path, "deploy.lock"));
      await refused(
        stateLock(tmp.path, "deploy.lock", 100, "busy"),
        /^cannot open the lock .*deploy\.lock \(\w+\); remove it$/,
      );
    } finally {
      tmp.cleanup();
    }
  });

  it("a state directory that cannot be made: says to set HERMIT_HOME", async () => {
    const tmp = tempDir();
    try {
      writeFileSync(path.join(tmp.path, "file"), "");
      await refused(
        stateLock(path.join(tmp.path, "file", "hermit"), "deploy.lock", 100, "busy"),
        /^cannot create hermit's state directory .* \(\w+\); set HERMIT_HOME$/,
      );
    } finally {
      tmp.cleanup();
    }
  });
});
