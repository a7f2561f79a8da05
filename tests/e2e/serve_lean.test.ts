/**
 * What `hermit serve DIR` costs a session, by structure (the memory itself is the bench's to
 * measure): the watchdog it starts for itself is a shell, not a second hermit; and `serve` loads
 * only what serving needs: no command-line app (commander), no deploy, host or `init` code, and
 * for an adapter without a remote upstream none of the SDK's HTTP transports or OAuth client. The
 * second is checked on the sources under Bun, whose module registry lists every module a run
 * loaded; the binary is split at the same dynamic imports. And a session gone quiet gives its
 * compiled code and free heap back (HERMIT_IDLE_RELEASE), once per quiet spell, and answers as
 * before afterwards. Linux: inspects /proc.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { bunPath, examples, hermitBin, hermitEnv, root } from "../helpers/hermit.ts";
import { connectServe, textOf } from "../helpers/mcp.ts";
import { allProcesses, cmdline, collect, Reaper, waitFor } from "../helpers/procs.ts";
import { mcpInput, requirements, responses } from "../helpers/rootfs.ts";
import { tempDir } from "../helpers/tmp.ts";

const notes = path.join(examples, "notes");

describe("what serve costs a session", { timeout: 120_000 }, () => {
  const tmp = tempDir("hermit-lean-");
  const reaper = new Reaper();
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  it("the watchdog serve starts for itself is a shell, not another hermit", async () => {
    writeFileSync(
      path.join(tmp.path, "hermit.yaml"),
      `name: lean\nexports: { tools: [wait] }\ntools:\n  wait:\n    description: waits\n    input: { type: object }\n    run: [sleep, "60"]\n    timeout: 90\n`,
    );
    const child = spawn(hermitBin(), ["serve", tmp.path], {
      env: hermitEnv() as Record<string, string>,
      stdio: ["pipe", "pipe", "pipe"],
    });
    reaper.track(child.pid);
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
    // a running command tool is a group, and the first group starts the watchdog
    child.stdin.write(mcpInput([{ method: "tools/call", params: { name: "wait", arguments: {} } }]));
    const wd = await waitFor(
      () =>
        allProcesses().find((p) => cmdline(p.pid).includes(`watchdog --ppid ${child.pid} --supervise`))?.pid,
      { timeoutMs: 30_000, what: () => `serve's watchdog (stderr: ${stderr})` },
    );
    reaper.track(wd);
    const exe = readlinkSync(`/proc/${wd}/exe`);
    assert.notEqual(exe, readlinkSync(`/proc/${child.pid}/exe`), "the watchdog is not the hermit binary");
    assert.match(path.basename(exe), /^(sh|dash|bash|busybox|ash|mksh|ksh)$/, exe);
    child.kill("SIGTERM"); // (closing stdin would let the running call finish first)
    await new Promise((resolve) => child.once("exit", resolve));
  });

  const bun = bunPath();
  const req = requirements([{ what: "bun", ok: !!bun, fix: "npm install (bun is a devDependency)" }]);
  it("serve loads no command-line app, deploy, host or init code, nor HTTP transports it has no use for", {
    skip: req.skip,
  }, async () => {
    req.assertReady();
    const out = path.join(tmp.path, "modules.txt");
    const preload = path.join(tmp.path, "record.ts");
    // Bun keeps ES modules in require.cache too: on exit, write down every module the run loaded
    writeFileSync(
      preload,
      `import { writeFileSync } from "node:fs";\nprocess.on("exit", () => writeFileSync(${
        JSON.stringify(out)
      }, Object.keys(require.cache).join("\\n")));\n`,
    );
    const child = spawn(bun!, ["--preload", preload, path.join(root, "src", "main.ts"), "serve", notes], {
      env: hermitEnv() as Record<string, string>,
      stdio: ["pipe", "pipe", "pipe"],
    });
    reaper.track(child.pid);
    const r = await collect(
      child,
      mcpInput([{ method: "tools/list" }, {
        method: "tools/call",
        params: { name: "list_notes", arguments: {} },
      }]),
      60_000,
      "bun src/main.ts serve examples/notes",
    );
    assert.equal(r.code, 0, r.stderr);
    assert.ok(responses(r.stdout).get(3)?.result, `the tool was called: ${r.stdout}`);
    const loaded = readFileSync(out, "utf8").split("\n");
    assert.ok(
      loaded.some((m) => m.endsWith(path.join("src", "mcp", "session.ts"))),
      "the session was served",
    );
    const unneeded = loaded.filter((m) =>
      /[\\/]node_modules[\\/](commander|@commander-js|eventsource|eventsource-parser|pkce-challenge)[\\/]/
        .test(m) ||
      /[\\/]sdk[\\/]dist[\\/]esm[\\/]client[\\/](sse|streamableHttp|auth)\.js$/.test(m) ||
      /[\\/]src[\\/](cli[\\/](app|init|deploy|check|login|status|tools|call)|deploy|hosts|adapter[\\/]scaffold)/
        .test(m)
    );
    assert.deepEqual(unneeded, [], "serve loaded what it does not need");
  });

  it("a quiet session gives memory back once per quiet spell, and answers as before after it", async () => {
    const released = /quiet for 1 s: memory given back/g;
    const s = await connectServe(notes, { env: { HERMIT_IDLE_RELEASE: "1", HERMIT_LOG: "debug" } });
    reaper.track(s.pid);
    try {
      const count = () => s.stderr().match(released)?.length ?? 0;
      const list = async () => textOf(await s.client.callTool({ name: "list_notes", arguments: {} }));
      const before = await list();
      await waitFor(() => count() >= 1, {
        timeoutMs: 20_000,
        what: () => `a release (stderr: ${s.stderr()})`,
      });
      const first = count();
      await new Promise((r) => setTimeout(r, 2500));
      assert.equal(count(), first, "quiet on: no second release without traffic");
      for (let i = 0; i < 5; i++) assert.equal(await list(), before, "the same answer after the release");
      await waitFor(() => count() > first, {
        timeoutMs: 20_000,
        what: () => `a release after new traffic (stderr: ${s.stderr()})`,
      });
      assert.equal(await list(), before);
      assert.doesNotMatch(s.stderr(), /uncaught|panic|segmentation/i);
    } finally {
      await s.close();
    }
  });

  it("a release while a call is running leaves the call to finish and answer", async () => {
    const dir = path.join(tmp.path, "slow");
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      path.join(dir, "hermit.yaml"),
      `name: slow\nexports: { tools: [slow] }\ntools:\n  slow:\n    description: answers after a while\n` +
        `    input: { type: object }\n    run: [sh, -c, "sleep 3; echo finished"]\n    timeout: 60\n`,
    );
    const s = await connectServe(dir, { env: { HERMIT_IDLE_RELEASE: "1", HERMIT_LOG: "debug" } });
    reaper.track(s.pid);
    try {
      const released = () => s.stderr().match(/quiet for 1 s: memory given back/g)?.length ?? 0;
      const before = released();
      // nothing passes between host and serve while the tool sleeps: a release comes mid-call
      const answer = await s.client.callTool({ name: "slow", arguments: {} });
      assert.ok(released() > before, `no release during the call (stderr: ${s.stderr()})`);
      assert.match(textOf(answer), /finished/);
      assert.equal((answer as { isError?: boolean }).isError ?? false, false);
      assert.match(textOf(await s.client.callTool({ name: "slow", arguments: {} })), /finished/);
    } finally {
      await s.close();
    }
  });
});
