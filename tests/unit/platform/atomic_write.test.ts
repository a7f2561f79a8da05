/**
 * Atomic replacement of hermit's private files: a new inode each time, the given mode whatever
 * the umask, no temporary file left behind, and the old file kept when the rename fails.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { writeFileAtomic } from "../../../src/platform/atomic_write.ts";
import { tempDir } from "../../helpers/tmp.ts";

const posix = process.platform !== "win32";

describe("writeFileAtomic", () => {
  it("replaces files atomically: a new inode, no temp file left, the old file kept on failure", () => {
    const tmp = tempDir();
    try {
      const file = path.join(tmp.path, "f.json");
      writeFileAtomic(file, "one");
      const ino = statSync(file).ino;
      writeFileAtomic(file, "two");
      assert.equal(readFileSync(file, "utf8"), "two");
      assert.notEqual(statSync(file).ino, ino, "replaced by rename, not rewritten in place");
      assert.deepEqual(readdirSync(tmp.path), ["f.json"]);
      // the rename fails (the target is a non-empty directory): the temp file goes, the rest stays
      const dir = path.join(tmp.path, "d");
      mkdirSync(dir);
      writeFileSync(path.join(dir, "inside"), "");
      assert.throws(() => writeFileAtomic(dir, "x"));
      assert.deepEqual(readdirSync(tmp.path).sort(), ["d", "f.json"]);
      assert.equal(readFileSync(file, "utf8"), "two");
    } finally {
      tmp.cleanup();
    }
  });

  it("writes mode 0600 by default, or the mode it is given, whatever the file had", { skip: !posix }, () => {
    const tmp = tempDir();
    try {
      const file = path.join(tmp.path, "f");
      writeFileSync(file, "old", { mode: 0o644 });
      writeFileAtomic(file, "new");
      assert.equal(statSync(file).mode & 0o777, 0o600);
      writeFileAtomic(file, new TextEncoder().encode("bytes"), 0o640);
      assert.equal(statSync(file).mode & 0o777, 0o640);
      assert.equal(readFileSync(file, "utf8"), "bytes");
    } finally {
      tmp.cleanup();
    }
  });
});
