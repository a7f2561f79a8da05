/**
 * Right before and after a spawn: gate 1 screens the interpolated values, the working directory
 * included, for command tools and stdio upstreams alike; and a command tool that exits leaves
 * nothing running in its process group, and no group registered with hermit.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { contextFrom } from "../../../src/manifest/interpolate.ts";
import { parseManifest } from "../../../src/manifest/load.ts";
import { CommandRefused, type CommandToolContext, runCommandTool } from "../../../src/mcp/command_tool.ts";
import { buildTransport, UpstreamRefused } from "../../../src/mcp/upstream_transport.ts";
import { activeGroups } from "../../../src/process/group_registry.ts";
import { alive, kill, waitFor } from "../../helpers/procs.ts";
import { tempDir } from "../../helpers/tmp.ts";

const posix = process.platform !== "win32";

function adapter(dir: string) {
  return parseManifest(
    [
      "name: spawn",
      "exports: { tools: [in_workdir, leaves_child, up_tool] }",
      "tools:",
      "  in_workdir:",
      "    description: Runs where WORKDIR says",
      `    run: [node, -e, "require('fs').writeFileSync('ran', '')"]`,
      '    cwd: "${WORKDIR}"',
      "  leaves_child:",
      "    description: Leaves a background child behind and exits at once",
      '    run: [sh, -c, "sleep 30 >/dev/null 2>&1 & echo $!"]',
      "mcp_servers:",
      "  up:",
      "    command: node",
      '    cwd: "${WORKDIR}"',
      "    tools: { include: [up_tool] }",
    ].join("\n") + "\n",
    path.join(dir, "hermit.yaml"),
    dir,
  ).manifest;
}

function context(dir: string, env: Record<string, string | undefined>): CommandToolContext {
  return {
    adapterDir: dir,
    interpolation: contextFrom(env, dir),
    parentEnv: env,
    platform: process.platform,
  };
}

describe("screening at spawn covers the working directory", () => {
  const attack = { ...process.env, WORKDIR: "/tmp/hermes-0day" };

  it("a command tool whose interpolated cwd carries an indicator is refused and not run", async () => {
    const tmp = tempDir();
    try {
      const m = adapter(tmp.path);
      await assert.rejects(
        runCommandTool(m.tools.in_workdir, {}, context(tmp.path, attack)),
        (e: unknown) =>
          e instanceof CommandRefused &&
          /^refused: tools\.in_workdir: .*hermes-0day.*NOT run/.test(e.message),
      );
      // the same tool with a harmless directory runs
      const ok = await runCommandTool(
        m.tools.in_workdir,
        {},
        context(tmp.path, { ...process.env, WORKDIR: "." }),
      );
      assert.notEqual(ok.isError, true, JSON.stringify(ok));
      assert.ok(existsSync(path.join(tmp.path, "ran")));
    } finally {
      tmp.cleanup();
    }
  });

  it("a stdio upstream whose interpolated cwd carries an indicator is refused before its transport exists", async () => {
    const tmp = tempDir();
    try {
      const m = adapter(tmp.path);
      await assert.rejects(
        buildTransport(m.upstreams.up, context(tmp.path, attack)),
        (e: unknown) =>
          e instanceof UpstreamRefused && /^refused: mcp_servers\.up: .*hermes-0day/.test(e.message),
      );
      const built = await buildTransport(m.upstreams.up, context(tmp.path, { ...process.env, WORKDIR: "." }));
      assert.equal(built.describe, "node");
    } finally {
      tmp.cleanup();
    }
  });
});

describe("a command tool that exits", () => {
  it(
    "takes what it left running in its group with it, and its group is forgotten",
    { skip: !posix },
    async () => {
      const tmp = tempDir();
      let child = 0;
      try {
        const m = adapter(tmp.path);
        const before = activeGroups();
        const r = await runCommandTool(m.tools.leaves_child, {}, context(tmp.path, process.env));
        assert.notEqual(r.isError, true, JSON.stringify(r));
        child = Number((r.content[0] as { text: string }).text.trim());
        assert.ok(child > 1, `the background child's pid: ${JSON.stringify(r)}`);
        await waitFor(() => !alive(child), { timeoutMs: 5000, what: "the background child to be gone" });
        assert.deepEqual(activeGroups(), before, "no group left registered");
      } finally {
        if (child > 1) kill(child);
        tmp.cleanup();
      }
    },
  );
});
