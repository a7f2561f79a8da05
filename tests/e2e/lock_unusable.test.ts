/**
 * A hermit.lock that is there but cannot be used (a merge conflict left in it, a version edited
 * by hand) starts no upstream server at all, from the compiled binary: `tools`, `call` and `serve`
 * leave the server unstarted (its start counter does not move) and say in one line which file and
 * how to fix it, `check` says the same; a session already serving starts the server once the lock
 * reads again, without a restart. Before, the server started unpinned (whatever version was
 * newest) with only its tools withheld.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { fixtures, runHermit } from "../helpers/hermit.ts";
import { connectServe } from "../helpers/mcp.ts";
import { Reaper, waitFor } from "../helpers/procs.ts";
import { tempDir } from "../helpers/tmp.ts";

const rugpull = path.join(fixtures, "servers", "rugpull.mjs");

describe("a hermit.lock that cannot be used", () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });
  const dir = path.join(tmp.path, "conflict");
  const starts = path.join(dir, "starts");
  const lockFile = path.join(dir, "hermit.lock");
  const count = () => readFileSync(starts, "utf8").split("\n").filter(Boolean).length;
  let good = "";
  const UNUSABLE = new RegExp(
    `${
      lockFile.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
    } cannot be used \\(not valid YAML[^)]*\\), so no upstream server starts; fix it \\(resolve a merge conflict\\) or review and rewrite it with 'hermit lock .+'`,
  );

  it("is locked, then left with a merge conflict", async () => {
    mkdirSync(dir);
    writeFileSync(
      path.join(dir, "hermit.yaml"),
      `name: conflict
exports: { tools: [fetch_page, ping_server] }
mcp_servers:
  web:
    command: node
    args: [${JSON.stringify(rugpull)}]
    env: { RUG_STATE: ${JSON.stringify(starts)} }
    sandbox: { write: [${JSON.stringify(dir)}] }
`,
    );
    const lock = await runHermit(["lock", dir]);
    assert.equal(lock.code, 0, lock.stdout + lock.stderr);
    good = readFileSync(lockFile, "utf8");
    writeFileSync(lockFile, `<<<<<<< HEAD\n${good}=======\n${good}>>>>>>> theirs\n`);
    assert.equal(count(), 1);
  });

  it("tools, call and check start nothing and say which file and how to fix it", async () => {
    const tools = await runHermit(["tools", dir]);
    assert.match(tools.stdout + tools.stderr, UNUSABLE);
    const call = await runHermit(["call", dir, "ping_server"]);
    assert.notEqual(call.code, 0);
    assert.match(call.stdout + call.stderr, UNUSABLE);
    const check = await runHermit(["check", dir, "--static"]);
    assert.equal(check.code, 3, check.stdout);
    assert.match(
      check.stdout,
      /problem {2}hermit\.lock cannot be used \(not valid YAML[^)]*\): no upstream server starts;/,
    );
    assert.equal(count(), 1, "the server never started");
  });

  it("serve starts nothing; once the lock reads again, the session starts the server", async () => {
    const s = await connectServe(dir);
    reaper.track(s.pid);
    let changed = 0;
    s.client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
    assert.deepEqual((await s.client.listTools()).tools, []);
    assert.match(s.stderr(), UNUSABLE);
    assert.equal(count(), 1, "the server never started");
    writeFileSync(lockFile, good);
    await waitFor(() => changed > 0 && count() === 2, { timeoutMs: 15_000, what: "the server started" });
    await waitFor(async () => (await s.client.listTools()).tools.length === 2, {
      timeoutMs: 10_000,
      what: "both tools served",
    });
    await s.close();
  });
});
