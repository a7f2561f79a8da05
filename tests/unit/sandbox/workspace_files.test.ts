/**
 * What the sandbox reads of files an entry may have written: a directory made huge is read only
 * so far; submodules are found in a real `.git/modules`.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { ENTRIES_READ, subdirectories, submodules } from "../../../src/sandbox/workspace_files.ts";
import { tempDir } from "../../helpers/tmp.ts";

describe("files an entry may have written", () => {
  it("a directory with more entries than the budget is read only up to it", () => {
    const tmp = tempDir();
    try {
      for (let i = 0; i < ENTRIES_READ + 300; i++) mkdirSync(path.join(tmp.path, `d${i}`));
      writeFileSync(path.join(tmp.path, "file"), "");
      const got = subdirectories(tmp.path)!;
      assert.ok(got.length <= ENTRIES_READ, String(got.length));
      assert.ok(got.length >= ENTRIES_READ - 1, String(got.length));
      assert.equal(subdirectories(path.join(tmp.path, "missing")), undefined);
    } finally {
      tmp.cleanup();
    }
  });

  it("submodules in a real .git/modules: by their HEAD, nested ones too", () => {
    const tmp = tempDir();
    try {
      const modules = path.join(tmp.path, ".git", "modules");
      for (const m of ["lib", "vendor/x", "lib/modules/deep"]) {
        mkdirSync(path.join(modules, m, "hooks"), { recursive: true });
        writeFileSync(path.join(modules, m, "HEAD"), "ref: refs/heads/main\n");
      }
      assert.deepEqual(submodules(modules).sort(), ["lib", "lib/modules/deep", "vendor/x"]);
      assert.deepEqual(submodules(path.join(tmp.path, "none")), []);
    } finally {
      tmp.cleanup();
    }
  });
});
