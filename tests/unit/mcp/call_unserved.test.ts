/**
 * `hermit call` on a tool that is defined but not in `exports.tools` says so, as `check` does, and
 * never passes the SDK's "Method not found" through; an unknown tool is named as unknown (exit 2).
 */
import assert from "node:assert/strict";
import path from "node:path";
import { describe, it } from "node:test";
import { Exit, HermitError } from "../../../src/errors.ts";
import { parseManifest } from "../../../src/manifest/load.ts";
import { callOnce } from "../../../src/mcp/diagnostics.ts";
import { tempDir } from "../../helpers/tmp.ts";

function adapter(dir: string, exported: string[]) {
  return parseManifest(
    [
      "name: base",
      `exports: { tools: [${exported.join(", ")}] }`,
      "tools:",
      "  hello:",
      "    description: Says hello",
      "    run: [echo, hello]",
      "  fail:",
      "    description: Fails",
      "    run: [sh, -c, exit 1]",
    ].join("\n") + "\n",
    path.join(dir, "hermit.yaml"),
    dir,
  ).manifest;
}

async function callError(exported: string[], tool: string): Promise<HermitError> {
  const tmp = tempDir();
  try {
    await callOnce(adapter(tmp.path, exported), tool, {});
  } catch (err) {
    assert.ok(err instanceof HermitError, `expected a HermitError, got ${err}`);
    return err;
  } finally {
    tmp.cleanup();
  }
  assert.fail(`${tool} was called`);
}

const NOT_SERVED = "tools.hello is defined but not in exports.tools, so it is not served: " +
  "add it to exports: { tools: [...] }";

describe("calling a tool that is not served", () => {
  it("defined, with nothing exported: says it is not in exports.tools", async () => {
    const err = await callError([], "hello");
    assert.equal(err.message, NOT_SERVED);
    assert.equal(err.exitCode, Exit.usage);
  });

  it("defined, with other tools exported: says it is not in exports.tools", async () => {
    const err = await callError(["fail"], "hello");
    assert.equal(err.message, NOT_SERVED);
    assert.equal(err.exitCode, Exit.usage);
  });

  it("not defined anywhere, with nothing exported: unknown, never 'Method not found'", async () => {
    const err = await callError([], "nope");
    assert.equal(err.message, "unknown tool 'nope'; exported tools: none");
    assert.equal(err.exitCode, Exit.usage);
  });

  it("not defined anywhere, with tools exported: unknown, with the exported tools", async () => {
    const err = await callError(["hello", "fail"], "nope");
    assert.equal(err.message, "unknown tool 'nope'; exported tools: hello, fail");
  });
});
