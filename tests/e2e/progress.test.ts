/**
 * Long waits, as a person at a terminal sees them (a pseudo-terminal from util-linux `script`):
 * `hermit check` (and `hermit lock`, `hermit add`) starting an adapter whose upstream is slow to start, and a relay (`hermit serve`
 * of a standalone adapter) starting its service, show what they wait on, on stderr, and erase
 * it; the relay's stdout (the protocol) gets none of it; without a terminal nothing is shown.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { hermitBin, hermitEnv, runHermit } from "../helpers/hermit.ts";
import { collect, kill, Reaper, waitFor } from "../helpers/procs.ts";
import { requirements, scriptNeed } from "../helpers/requirements.ts";
import { memoryServer, servicePids, writeStandaloneAdapter } from "../helpers/service.ts";
import { tempDir } from "../helpers/tmp.ts";
import { shellQuote } from "../../src/platform/shell_quote.ts";

const tty = requirements([scriptNeed()]);

/** `argv` in a pseudo-terminal (stdin, stdout and stderr all on it); its whole output. */
function inTerminal(command: string, env: Record<string, string | undefined>, reaper: Reaper) {
  const child = spawn("script", ["-qec", command, "/dev/null"], {
    env: hermitEnv(env) as Record<string, string>,
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  reaper.track(child.pid);
  reaper.trackGroup(child.pid);
  return child;
}

describe("progress on long waits", { skip: tty.skip }, () => {
  const tmp = tempDir("hermit-progress-");
  const reaper = new Reaper();
  after(async () => {
    for (const p of servicePids(path.join(tmp.path, "shared"))) reaper.track(p);
    await reaper.reap();
    tmp.cleanup();
  });

  /** An adapter whose one upstream takes 3 s to start. */
  const slow = path.join(tmp.path, "slow");
  mkdirSync(slow);
  writeFileSync(
    path.join(slow, "hermit.yaml"),
    `name: slow
exports: { tools: [read_graph] }
mcp_servers:
  memory:
    command: sh
    args: [-c, 'sleep 3; exec node ${memoryServer}']
    env: { MEMORY_FILE_PATH: "${path.join(slow, "g.jsonl")}" }
    tools: { include: [read_graph] }
`,
  );

  it("check at a terminal says what it waits on, then erases it before the report", async () => {
    tty.assertReady();
    const child = inTerminal(`${shellQuote(hermitBin())} check ${shellQuote(slow)}`, process.env, reaper);
    const r = await collect(child, "", 90_000, "check in a terminal");
    assert.equal(r.code, 0, r.stdout);
    const shown = r.stdout.indexOf(
      "hermit: waiting for slow to start its upstream servers: mcp_servers.memory",
    );
    assert.ok(shown >= 0, `the wait is shown:\n${JSON.stringify(r.stdout)}`);
    const erased = r.stdout.lastIndexOf("\r\x1b[K");
    const report = r.stdout.indexOf("hermit check: slow");
    assert.ok(shown < erased && erased < report, "shown, erased, then the report");
  });

  it("lock at a terminal says what it waits on too, then erases it before the report", async () => {
    tty.assertReady();
    const child = inTerminal(
      `${shellQuote(hermitBin())} lock ${shellQuote(slow)} --check`,
      process.env,
      reaper,
    );
    const r = await collect(child, "", 90_000, "lock in a terminal");
    assert.equal(r.code, 3, r.stdout); // no hermit.lock yet: out of date
    const shown = r.stdout.indexOf(
      "hermit: waiting for slow to start its upstream servers: mcp_servers.memory",
    );
    assert.ok(shown >= 0, `the wait is shown:\n${JSON.stringify(r.stdout)}`);
    const erased = r.stdout.lastIndexOf("\r\x1b[K");
    const report = r.stdout.indexOf("hermit lock: slow");
    assert.ok(shown < erased && erased < report, "shown, erased, then the report");
  });

  it("check without a terminal shows nothing of it", async () => {
    const r = await runHermit(["check", slow], { timeoutMs: 90_000 });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(r.stderr, "");
    assert.doesNotMatch(r.stdout, /waiting for/);
  });

  it("hermit serve typed at a terminal says what it is waiting for, on stderr", async () => {
    tty.assertReady();
    const plain = path.join(tmp.path, "plain");
    mkdirSync(plain);
    writeFileSync(
      path.join(plain, "hermit.yaml"),
      "name: plain\nexports: { tools: [hi] }\ntools:\n  hi:\n    description: Hi\n    run: [echo, hi]\n",
    );
    const out = path.join(tmp.path, "serve-stdout");
    const child = inTerminal(
      `${shellQuote(hermitBin())} serve ${shellQuote(plain)} 1>${shellQuote(out)}`,
      process.env,
      reaper,
    );
    let seen = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (seen += d));
    try {
      await waitFor(() => seen.includes("Ctrl-D"), {
        timeoutMs: 30_000,
        what: () => `serve's hint (so far: ${JSON.stringify(seen)})`,
      });
      assert.match(seen, /hermit: serving plain over stdio: .*hermit deploy.*hermit call/);
      assert.equal(readFileSync(out, "utf8"), "", "nothing on stdout, the protocol's channel");
    } finally {
      kill(-child.pid!);
    }
  });

  it("a relay at a terminal says it waits for the service it launched; its stdout gets none of it", async () => {
    tty.assertReady();
    const shared = path.join(tmp.path, "shared");
    mkdirSync(shared);
    writeStandaloneAdapter(shared, { hostLaunch: true, idle: 300 });
    const out = path.join(tmp.path, "relay-stdout");
    const child = inTerminal(
      `${shellQuote(hermitBin())} serve ${shellQuote(shared)} 1>${shellQuote(out)}`,
      { ...process.env, HERMIT_PROGRESS_AFTER_MS: "0" },
      reaper,
    );
    let seen = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (seen += d));
    try {
      await waitFor(() => seen.includes("(its log: ") && servicePids(shared).length > 0, {
        timeoutMs: 60_000,
        what: () => `the relay's progress line (so far: ${JSON.stringify(seen)})`,
      });
      assert.match(seen, /hermit: waiting for the shared service to start \(its log: .*… \d+ s/);
      assert.doesNotMatch(readFileSync(out, "utf8"), /waiting|hermit:/, "nothing on the relay's stdout");
    } finally {
      kill(-child.pid!);
      for (const p of servicePids(shared)) reaper.track(p);
      await runHermit(["stop", shared], { timeoutMs: 30_000 }).catch(() => {});
    }
  });
});
