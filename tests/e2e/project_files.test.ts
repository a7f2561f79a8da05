/**
 * The directory hermit starts in is the user's project, never hermit's configuration. Hosts start
 * `hermit serve` with the project they opened as the working directory, and a project is often a
 * clone of someone else's repository: a `bunfig.toml` there must not run its `preload` inside
 * hermit (before any gate, outside any sandbox), and a `.env` there must not set hermit's own
 * variables (`HERMIT_SELF` names the executable hermit starts as its service and sandbox launcher,
 * `HERMIT_WORKSPACE` what the sandbox makes writable, `HERMIT_HOME` where logins are kept). A
 * binary from `bun build --compile` reads both from its working directory unless built not to.
 */
import assert from "node:assert/strict";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { examples, runHermit } from "../helpers/hermit.ts";
import { copyAdapter, tempDir } from "../helpers/tmp.ts";

const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
}) + "\n";

/** A cloned project holding files that would take over a binary that reads them. */
function hostileProject(dir: string): { marker: string } {
  const marker = path.join(dir, "preload-ran");
  writeFileSync(
    path.join(dir, "preload.js"),
    `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "ran");\n`,
  );
  writeFileSync(path.join(dir, "bunfig.toml"), `preload = ["./preload.js"]\n`);
  for (const f of [".env", ".env.local", ".env.production"]) {
    writeFileSync(path.join(dir, f), "HERMIT_LOG=debug\nHERMIT_LOG_FORMAT=json\n");
  }
  return { marker };
}

const jsonLogLines = (stderr: string) => stderr.split("\n").filter((l) => l.startsWith('{"level"'));

describe("files in the working directory", () => {
  const tmp = tempDir("hermit-project-files-");
  after(() => tmp.cleanup());
  const project = path.join(tmp.path, "project");
  copyAdapter(path.join(examples, "notes"), tmp.path, "project");
  const { marker } = hostileProject(project);
  // the variables themselves, not through any file: what hermit does when it does read them
  const { HERMIT_LOG: _l, HERMIT_LOG_FORMAT: _f, ...env } = process.env;

  test("a bunfig.toml's preload does not run in `hermit --version`", async () => {
    rmSync(marker, { force: true });
    const r = await runHermit(["--version"], { cwd: project, env });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^hermit \S+\n$/);
    assert.equal(existsSync(marker), false, `the project's preload ran inside hermit: ${marker} was written`);
  });

  test("`hermit serve` started in the project, as hosts start it: a bunfig.toml's preload does not run", async () => {
    rmSync(marker, { force: true });
    const r = await runHermit(["serve", "."], { cwd: project, env, input: INITIALIZE });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout.split("\n")[0]).id, 1, `no answer to initialize: ${r.stdout}`);
    assert.equal(
      existsSync(marker),
      false,
      `the project's preload ran inside hermit serve: ${marker} was written`,
    );
  });

  test("`hermit serve` started in the project: its .env files do not set hermit's variables", async () => {
    const r = await runHermit(["serve", "."], { cwd: project, env, input: INITIALIZE });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(jsonLogLines(r.stderr), [], "the project's .env set HERMIT_LOG_FORMAT for hermit");
  });

  test("the same variables set by the caller do take effect (what the test above would see)", async () => {
    const r = await runHermit(["serve", "."], {
      cwd: project,
      env: { ...env, HERMIT_LOG: "debug", HERMIT_LOG_FORMAT: "json" },
      input: INITIALIZE,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.notDeepEqual(jsonLogLines(r.stderr), [], `no JSON log line: ${r.stderr}`);
  });
});
