/**
 * What a server runs must be what hermit.lock holds for it, from the compiled binary. A hostile
 * edit to hermit.yaml that points a locked server at other code (which offers the very tool
 * definitions the lock holds, so no tool is withheld), a server hermit.lock has no entry for, and
 * a hostile edit to hermit.lock that drops what it recorded the server runs: none of them starts
 * (its start counter stays absent), and `call` says so in one line naming the server, hermit.lock
 * and the command that accepts it. Before, each ran, and the first one's tools were served.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fixtures, runHermit } from "../helpers/hermit.ts";
import { tempDir } from "../helpers/tmp.ts";

const rugpull = path.join(fixtures, "servers", "rugpull.mjs");

function adapter(dir: string, script: string, starts: string, extra = ""): void {
  writeFileSync(
    path.join(dir, "hermit.yaml"),
    `name: launch
exports: { tools: [fetch_page, ping_server] }
mcp_servers:
  web:
    command: node
    args: [${JSON.stringify(script)}]
    env: { RUG_STATE: ${JSON.stringify(starts)} }
    sandbox: { write: [${JSON.stringify(dir)}] }
${extra}`,
  );
}

describe("a server whose launch hermit.lock does not hold", () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());
  const dir = path.join(tmp.path, "launch");
  const starts = path.join(dir, "starts");
  const evil = path.join(dir, "evil.mjs");
  const evilStarts = path.join(dir, "evil-starts");
  const lockFile = path.join(dir, "hermit.lock");
  let good = "";

  it("is locked as it is", async () => {
    mkdirSync(dir);
    adapter(dir, rugpull, starts);
    const lock = await runHermit(["lock", dir]);
    assert.equal(lock.code, 0, lock.stdout + lock.stderr);
    good = readFileSync(lockFile, "utf8");
    assert.match(good, /command: node .*rugpull\.mjs/);
    const call = await runHermit(["call", dir, "ping_server"]);
    assert.equal(call.code, 0, call.stdout + call.stderr);
  });

  it("hermit.yaml pointed at other code with the same tools: not started, the call refused", async () => {
    copyFileSync(rugpull, evil);
    adapter(dir, evil, evilStarts);
    const call = await runHermit(["call", dir, "ping_server"]);
    assert.notEqual(call.code, 0, call.stdout);
    assert.match(
      call.stdout + call.stderr,
      /mcp_servers\.web not started: it runs 'node .*evil\.mjs', not what hermit\.lock holds for it \('node .*rugpull\.mjs'\); review it and accept it with 'hermit lock .+'/,
    );
    assert.ok(!existsSync(evilStarts), "the other code never ran");
    // check's comparison with the lock (it runs the locked versions) starts nothing of it either
    const check = await runHermit(["check", dir]);
    assert.ok(!existsSync(evilStarts), "check ran the other code");
    assert.equal(check.code, 3, check.stdout);
    assert.match(
      check.stdout,
      /problem {2}mcp_servers\.web is not started: it runs 'node .*evil\.mjs', not what hermit\.lock holds/,
    );
  });

  it("a server hermit.lock has no entry for: not started", async () => {
    const other = path.join(dir, "other-starts");
    adapter(
      dir,
      rugpull,
      starts,
      `    tools: { include: [ping_server] }
  other:
    command: node
    args: [${JSON.stringify(evil)}]
    env: { RUG_STATE: ${JSON.stringify(other)} }
    tools: { include: [fetch_page] }
`,
    );
    const call = await runHermit(["call", dir, "ping_server"]);
    assert.equal(call.code, 0, call.stdout + call.stderr);
    const tools = await runHermit(["tools", dir]);
    assert.match(
      tools.stdout + tools.stderr,
      /fetch_page: mcp_servers\.other could not be started: refused: mcp_servers\.other not started: it is not in hermit\.lock; review it and accept it with 'hermit lock .+'/,
    );
    const check = await runHermit(["check", dir, "--static"]);
    assert.match(
      check.stdout,
      /problem {2}mcp_servers\.other is not in hermit\.lock, so it is not started; review and lock it/,
    );
    assert.ok(!existsSync(other), "the server never ran");
  });

  it("hermit.lock edited to drop what the server runs: not started", async () => {
    adapter(dir, rugpull, starts);
    const before = readFileSync(starts, "utf8");
    writeFileSync(lockFile, good.replace(/^ {4}command: .*\n/m, ""));
    const call = await runHermit(["call", dir, "ping_server"]);
    assert.notEqual(call.code, 0, call.stdout);
    assert.match(
      call.stdout + call.stderr,
      /mcp_servers\.web not started: hermit\.lock holds no command for it/,
    );
    assert.equal(readFileSync(starts, "utf8"), before, "the server never ran");
    writeFileSync(lockFile, good);
    assert.equal((await runHermit(["call", dir, "ping_server"])).code, 0);
  });
});
