/**
 * A command tool whose program is a file in the adapter that is not executable says so, with the
 * fix (`chmod +x`), instead of "command not found"; a program that is missing is still not found.
 */
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { describe, it } from "node:test";
import { contextFrom } from "../../../src/manifest/interpolate.ts";
import { parseManifest } from "../../../src/manifest/load.ts";
import { type CommandToolContext, runCommandTool } from "../../../src/mcp/command_tool.ts";
import { tempDir } from "../../helpers/tmp.ts";

const posix = process.platform !== "win32";

function hello(dir: string) {
  return parseManifest(
    "name: base\nexports: { tools: [hello] }\ntools:\n  hello:\n    description: Says hello\n    run: [tools/hello.sh]\n",
    path.join(dir, "hermit.yaml"),
    dir,
  ).manifest.tools.hello;
}

function context(dir: string): CommandToolContext {
  return {
    adapterDir: dir,
    interpolation: contextFrom(process.env, dir),
    parentEnv: process.env,
    platform: process.platform,
  };
}

const textOf = (r: { content: unknown[] }) => (r.content[0] as { text: string }).text;

describe("a command tool's program that cannot run", { skip: !posix && "POSIX modes" }, () => {
  it("a script that exists but is not executable: says chmod +x", async () => {
    const tmp = tempDir();
    try {
      const dir = path.join(tmp.path, "tools");
      mkdirSync(dir);
      writeFileSync(path.join(dir, "hello.sh"), "#!/bin/sh\necho hello\n");
      chmodSync(path.join(dir, "hello.sh"), 0o644);
      const r = await runCommandTool(hello(tmp.path), {}, context(tmp.path));
      assert.equal(r.isError, true);
      assert.equal(textOf(r), "hello: tools/hello.sh is not executable: chmod +x tools/hello.sh");
    } finally {
      tmp.cleanup();
    }
  });

  it("a script that does not exist: command not found, as before", async () => {
    const tmp = tempDir();
    try {
      const r = await runCommandTool(hello(tmp.path), {}, context(tmp.path));
      assert.equal(r.isError, true);
      assert.equal(textOf(r), "hello: command not found: tools/hello.sh");
    } finally {
      tmp.cleanup();
    }
  });
});
