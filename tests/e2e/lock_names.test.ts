/**
 * hermit.lock keyed by names an upstream chose, from the compiled binary. hermit.lock's servers
 * and tools were plain objects: an upstream tool named `__proto__` was lost from the lock (the
 * write set the object's prototype), one named `constructor` or `toString` read as locked when it
 * was not (`Object`, a function), and `hermit lock`, `serve` and `check` ended in
 * `error: unexpected: undefined is not an object`; a server named `constructor` was "changed" at
 * its first lock, not added. Such names are now ordinary names: locked, served while unchanged,
 * withheld once changed.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fixtures, runHermit } from "../helpers/hermit.ts";
import { connectServe, textOf } from "../helpers/mcp.ts";
import { Reaper } from "../helpers/procs.ts";
import { tempDir } from "../helpers/tmp.ts";

const scripted = path.join(fixtures, "servers", "scripted.mjs");
const NAMES = ["__proto__", "constructor", "hasOwnProperty", "toString"];

describe("upstream tools and servers named like an object's own members", () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  const dir = tmp.path;
  /** The adapter; `extra` goes into every tool's description (a changed definition). */
  const adapter = (extra?: string) =>
    writeFileSync(
      path.join(dir, "hermit.yaml"),
      `name: protos
exports: { tools: [${NAMES.join(", ")}] }
mcp_servers:
  constructor:
    command: node
    args: [${JSON.stringify(scripted)}]
    env: { TOOLS: ${JSON.stringify(NAMES.join(","))}${
        extra ? `, DESCRIPTION_EXTRA: ${JSON.stringify(extra)}` : ""
      } }
`,
    );
  adapter();
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  it("hermit lock adds the server and every tool, and writes them all", async () => {
    const r = await runHermit(["lock", dir]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /\n {2}\+ mcp_servers\.constructor: command node /, "added, not changed");
    for (const n of NAMES) {
      assert.match(r.stdout, new RegExp(`\\+ ${n} \\(mcp_servers\\.constructor\\) added`));
    }
    assert.match(r.stdout, /wrote hermit\.lock \(1 server, 4 tools\)/);
    const text = readFileSync(path.join(dir, "hermit.lock"), "utf8");
    for (const n of NAMES) assert.match(text, new RegExp(`\n      ${n}:\n {8}sha256: sha256:`));
    const again = await runHermit(["lock", dir, "--check"]);
    assert.equal(again.code, 0, again.stdout + again.stderr);
  });

  it("unchanged: serve and check serve all four", async () => {
    const s = await connectServe(dir);
    reaper.track(s.pid);
    try {
      assert.deepEqual((await s.client.listTools()).tools.map((t) => t.name).sort(), NAMES, s.stderr());
      const r = await s.client.callTool({ name: "constructor", arguments: { text: "v" } });
      assert.equal(textOf(r), "constructor: v (listings 1)");
    } finally {
      await s.close();
    }
    const check = await runHermit(["check", dir]);
    assert.equal(check.code, 0, check.stdout + check.stderr);
    assert.match(check.stdout, /hermit\.lock pins 1 server and 4 tool definitions/);
  });

  it("changed: each is withheld, a call refused naming the change, check shows the diff", async () => {
    adapter(" now changed");
    const call = await runHermit(["call", dir, "toString", "--args", '{"text": "v"}']);
    assert.equal(call.code, 4, call.stdout + call.stderr);
    assert.match(
      call.stdout,
      /^refused: tool 'toString' \(mcp_servers\.constructor\) changed since hermit\.lock: description \(\+2 words, -0\)/,
    );
    const check = await runHermit(["check", dir]);
    assert.equal(check.code, 3, check.stdout + check.stderr);
    for (const n of NAMES) {
      assert.match(
        check.stdout,
        new RegExp(`problem {2}${n} \\(mcp_servers\\.constructor\\) changed since hermit\\.lock`),
      );
    }
    assert.match(check.stdout, /description: The __proto__ tool \{\+now changed\+\}/);
    assert.doesNotMatch(check.stdout + check.stderr, /unexpected/);
  });
});
