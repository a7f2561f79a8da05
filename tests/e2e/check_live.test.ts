/**
 * `hermit check`'s live health rule, from the binary: the adapter is started for real, and
 * `tools/list` must equal `exports.tools` (exit 3 otherwise). Standalone adapters are checked
 * through the relay.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { runHermit } from "../helpers/hermit.ts";
import { alive, Reaper } from "../helpers/procs.ts";
import {
  memoryServer,
  readEndpointFile,
  servicePids,
  startService,
  writeStandaloneAdapter,
} from "../helpers/service.ts";
import { tempDir } from "../helpers/tmp.ts";

interface Report {
  verdict: string;
  findings: { level: string; area: string; message: string }[];
}

const live = (r: Report) => r.findings.filter((f) => f.area === "health");

describe("check: the live health rule", () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  after(async () => {
    for (const p of servicePids(path.join(tmp.path, "standalone"))) reaper.track(p);
    await reaper.reap();
    tmp.cleanup();
  });

  it("a healthy adapter: initialize answered and tools/list equals exports.tools", async () => {
    assert.equal((await runHermit(["init", "fresh"], { cwd: tmp.path })).code, 0);
    const r = await runHermit(["check", "fresh", "--json"], { cwd: tmp.path });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const report = JSON.parse(r.stdout) as Report;
    assert.equal(report.verdict, "healthy");
    assert.match(
      live(report)[0].message,
      /^live: initialize answered in \d+ ms; tools\/list matches exports\.tools \(1 tool\)$/,
    );
  });

  it("an export the live server does not offer is a problem (exit 3), though the static rules pass", async () => {
    const dir = path.join(tmp.path, "mismatch");
    await runHermit(["init", "mismatch"], { cwd: tmp.path });
    writeFileSync(
      path.join(dir, "hermit.yaml"),
      `name: mismatch
exports: { tools: [read_graph, no_such_tool] }
mcp_servers:
  memory:
    command: node
    args: [${JSON.stringify(memoryServer)}]
    env: { MEMORY_FILE_PATH: "${path.join(dir, "g.jsonl")}" }
`,
    );
    const statik = await runHermit(["check", "mismatch", "--static"], { cwd: tmp.path });
    assert.equal(statik.code, 0, "statically, an upstream without include could offer it");
    const r = await runHermit(["check", "mismatch", "--json"], { cwd: tmp.path });
    assert.equal(r.code, 3, r.stdout + r.stderr);
    const report = JSON.parse(r.stdout) as Report;
    assert.deepEqual(live(report).map((f) => [f.level, f.message]), [[
      "problem",
      "live: exported but not served: no_such_tool (no command tool defines it and no upstream server offers it)",
    ]]);
    // (serve may warn about other things where the machine lacks them, e.g. user namespaces)
    assert.deepEqual(
      report.findings.filter((f) => f.area === "serve" && f.message.includes("no_such_tool")),
      [],
      "serve's line about it is the problem, not a warning too",
    );
  });

  it("an adapter whose upstream cannot start is a problem", async () => {
    const dir = path.join(tmp.path, "broken");
    await runHermit(["init", "broken"], { cwd: tmp.path });
    writeFileSync(
      path.join(dir, "hermit.yaml"),
      `name: broken
exports: { tools: [anything] }
mcp_servers:
  gone: { command: "false", tools: { include: [anything] } }
`,
    );
    const r = await runHermit(["check", "broken", "--json"], { cwd: tmp.path });
    assert.equal(r.code, 3, r.stdout + r.stderr);
    const [cause, ...rest] = live(JSON.parse(r.stdout));
    assert.equal(cause.level, "problem");
    assert.match(cause.message, /^live: mcp_servers\.gone could not be started: .+; not served: anything$/);
    assert.deepEqual(rest, [], "the cause is the one finding");
  });

  it("a server refused before it starts is one problem, not a live warning too", async () => {
    const dir = path.join(tmp.path, "cleartext");
    mkdirSync(dir, { recursive: true });
    const manifest = (exported: string) =>
      `name: cleartext
exports: { tools: [${exported}] }
tools:
  local: { description: A command tool, run: [node, -e, "0"], read_only: true }
mcp_servers:
  remote: { url: "http://example.com/mcp", headers: { Authorization: "Bearer abc" } }
`;
    writeFileSync(path.join(dir, "hermit.yaml"), manifest("local"));
    const once = JSON.parse((await runHermit(["check", dir, "--json"])).stdout) as Report;
    const about = (r: Report) => r.findings.filter((f) => f.message.includes("mcp_servers.remote"));
    assert.deepEqual(
      about(once).map((f) => [f.level, f.area]),
      [["problem", "screening"]],
      JSON.stringify(once),
    );
    writeFileSync(path.join(dir, "hermit.yaml"), manifest("local, remote_tool"));
    const left = JSON.parse((await runHermit(["check", dir, "--json"])).stdout) as Report;
    assert.deepEqual(about(left).slice(1).map((f) => [f.level, f.message]), [[
      "problem",
      "live: not served, as mcp_servers.remote was refused (above): remote_tool",
    ]]);
  });

  it("check FILE.yaml starts that manifest, not DIR/hermit.yaml", async () => {
    const file = path.join(tmp.path, "other-name.yaml");
    writeFileSync(
      file,
      `name: other-name\nexports: { tools: [hi] }\ntools:\n  hi: { description: Says hi, run: [node, -e, "0"], read_only: true }\n`,
    );
    const r = await runHermit(["check", file, "--json"]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(
      live(JSON.parse(r.stdout) as Report)[0].message,
      /^live: initialize answered in \d+ ms; tools\/list matches/,
    );
  });

  it("a standalone adapter: checked through the relay, the service it started is stopped; serve --standalone then works", async () => {
    const dir = path.join(tmp.path, "standalone");
    await runHermit(["init", "standalone"], { cwd: tmp.path });
    writeStandaloneAdapter(dir, { hostLaunch: true, idle: 300 });
    const r = await runHermit(["check", dir, "--json"]);
    for (const p of servicePids(dir)) reaper.track(p);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const health = live(JSON.parse(r.stdout));
    assert.match(health[0].message, /tools\/list matches exports\.tools \(3 tools\)/);
    assert.match(health.at(-1)!.message, /^live: stopped the service check started \(pid \d+\)$/);
    const pid = Number(/pid (\d+)/.exec(health.at(-1)!.message)![1]);
    assert.equal(alive(pid), false, "the service check started is gone");
    assert.equal(readEndpointFile(dir), undefined, "and its endpoint with it");
    assert.deepEqual(servicePids(dir), [], "nothing of it is left running");

    // the README's next step
    const service = await startService(dir, {}, { reaper });
    try {
      const again = await runHermit(["check", dir]);
      assert.equal(again.code, 0, again.stdout + again.stderr);
      assert.match(
        again.stdout,
        new RegExp(
          `live: checked through the service already running \\(pid ${service.pid}\\); left running`,
        ),
      );
      assert.ok(alive(service.pid), "a service check did not start is left running");
    } finally {
      await service.stop();
    }
  });
});
