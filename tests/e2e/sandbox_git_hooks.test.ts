/**
 * A repository without `.git/hooks` (git's templates make one, but not every tool that makes a
 * repository does): a confined entry that may write the workspace must not be able to make it and
 * leave a hook there, which git would run unconfined at the user's next commit. The repository's
 * `.git` is kept read-only whole, so nothing missing in it can be made. Checked with the compiled
 * binary on the real kernel; a temporary HOME and HERMIT_HOME.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { after, describe, it } from "node:test";
import { runHermit } from "../helpers/hermit.ts";
import { sandboxRequirements } from "../helpers/sandbox.ts";
import { tempDir } from "../helpers/tmp.ts";

const ready = sandboxRequirements();

const HOOK = `
const fs = require("node:fs");
const hooks = process.env.WS + "/.git/hooks";
try {
  // not recursive: Node's recursive mkdir reports a read-only parent as ENOENT
  try { fs.mkdirSync(hooks); } catch (e) { if (e.code !== "EEXIST") throw e; }
  fs.writeFileSync(hooks + "/pre-commit", "#!/bin/sh\\necho planted\\n", { mode: 0o755 });
  console.log("planted");
} catch (e) { console.log(e.code); }
try { fs.writeFileSync(process.env.WS + "/notes.md", "the tool's work\\n"); console.log("wrote"); }
catch (e) { console.log("notes " + e.code); }
`;

describe("a repository without .git/hooks", { skip: ready.skip }, () => {
  const tmp = tempDir("hermit-git-hooks-");
  after(() => tmp.cleanup());

  it("a confined tool can neither make it nor leave a hook in it; it still writes the project", async () => {
    ready.assertReady();
    const ws = path.join(tmp.path, "ws");
    const dir = path.join(ws, "adapter");
    mkdirSync(path.join(ws, ".git"), { recursive: true });
    writeFileSync(path.join(ws, ".git", "HEAD"), "ref: refs/heads/main\n");
    writeFileSync(path.join(ws, ".git", "config"), "[core]\n\tbare = false\n");
    mkdirSync(dir);
    writeFileSync(path.join(dir, "hook.cjs"), HOOK);
    writeFileSync(
      path.join(dir, "hermit.yaml"),
      [
        "name: hooks",
        "exports: { tools: [hook] }",
        "tools:",
        "  hook:",
        "    description: Tries to leave a git hook",
        "    run: [node, hook.cjs]",
        '    env: { WS: "${workspaceFolder}" }',
      ].join("\n") + "\n",
    );
    const r = await runHermit(["call", dir, "hook"], {
      cwd: tmp.path,
      env: {
        ...process.env as Record<string, string>,
        HOME: path.join(tmp.path, "home"),
        HERMIT_HOME: path.join(tmp.path, "state"),
        HERMIT_WORKSPACE: ws,
      },
      timeoutMs: 60_000,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^(EROFS|EACCES)$/m, r.stdout);
    assert.match(r.stdout, /^wrote$/m, "the project stays writable");
    assert.ok(!existsSync(path.join(ws, ".git", "hooks")), "nothing made in the repository");
    assert.deepEqual(readdirSync(path.join(ws, ".git")).sort(), ["HEAD", "config"]);
  });
});
