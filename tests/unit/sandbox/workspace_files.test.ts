/**
 * What the sandbox reads of files an entry may have written: a directory made huge is read only
 * so far; submodules are found in a real `.git/modules`; a repository is found as git finds it
 * (a `.git` directory, a `.git` file, a `commondir`).
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import {
  ENTRIES_READ,
  repositoryFacts,
  subdirectories,
  submodules,
} from "../../../src/sandbox/workspace_files.ts";
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

  it("a repository as git finds it: its config and its submodules' trees, through a .git file and a commondir", () => {
    const tmp = tempDir();
    try {
      const main = path.join(tmp.path, "main");
      const git = path.join(main, ".git");
      mkdirSync(path.join(git, "modules", "lib"), { recursive: true });
      writeFileSync(path.join(git, "config"), "[core]\n\thooksPath = .githooks\n");
      writeFileSync(path.join(git, "modules", "lib", "HEAD"), "ref: refs/heads/main\n");
      writeFileSync(path.join(git, "modules", "lib", "config"), "[core]\n\tworktree = ../../../vendor/lib\n");
      const facts = repositoryFacts(main);
      assert.match(facts.gitConfig ?? "", /hooksPath = \.githooks/);
      assert.deepEqual(facts.submoduleTrees, [path.join(main, "vendor", "lib")]);
      // a worktree: .git is a file naming its git directory, whose commondir leads to the rest
      const admin = path.join(git, "worktrees", "w");
      mkdirSync(admin, { recursive: true });
      writeFileSync(path.join(admin, "commondir"), "../..\n");
      const wt = path.join(tmp.path, "wt");
      mkdirSync(wt);
      writeFileSync(path.join(wt, ".git"), `gitdir: ${admin}\n`);
      assert.deepEqual(repositoryFacts(wt), facts);
      // no repository; a .git file naming nothing
      assert.deepEqual(repositoryFacts(path.join(tmp.path, "none")), { submoduleTrees: [] });
      const odd = path.join(tmp.path, "odd");
      mkdirSync(odd);
      writeFileSync(path.join(odd, ".git"), "not a gitdir line\n");
      assert.deepEqual(repositoryFacts(odd), { submoduleTrees: [] });
    } finally {
      tmp.cleanup();
    }
  });
});
