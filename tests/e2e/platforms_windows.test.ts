/**
 * The windows-x64 binary, run under Wine (Debian 12's wine64, Wine 8.0) in a private prefix:
 * `--version`, `init` and `check` (with its live start: hermit.exe starting hermit.exe over
 * Windows pipes), `serve` answering tools/list and calls of command tools (a .exe found through
 * PATHEXT, a .cmd with awkward arguments, a .cmd that forwards `%*` to a .exe) and of an upstream
 * started as `npx` — resolved to `npx.cmd` and run through cmd.exe, no shell — all in directories
 * with spaces; and, with hermit killed outright, its child's whole tree (cmd.exe and the ping.exe
 * it started) ended by the watchdog, plus `hermit watchdog --ppid` noticing its parent is gone;
 * and the lock (a pid file with pid and creation time) against stale, reused and live holders.
 *
 * What Wine needs that Windows has (neither changes hermit):
 *  - `bcryptprimitives.dll`: Bun imports ProcessPrng from it; Wine 8 lacks it (Wine ≥ 9 has it),
 *    so a forwarder DLL beside hermit.exe maps it to advapi32's RtlGenRandom (pe_forwarder.ts).
 *  - stdin from a file: Bun cannot read a Unix pipe that Wine hands a Windows process as stdin
 *    (`Bun.stdin.stream()` fails with EBADF), so `serve` is fed from a file; pipes between
 *    Windows processes (check → serve, serve → upstream) are real Windows pipes and work.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { bcryptPrimitivesDll } from "../helpers/pe_forwarder.ts";
import { bunPath, fixtures, root, runCommand } from "../helpers/hermit.ts";
import { cmdline, Reaper, waitFor } from "../helpers/procs.ts";
import { callText, collect, findTool, mcpInput, requirements, responses } from "../helpers/rootfs.ts";
import { buildTarget } from "../helpers/targets.ts";
import { tempDir } from "../helpers/tmp.ts";

const version: string = JSON.parse(readFileSync(path.join(root, "deno.json"), "utf8")).version;
const wine = findTool("wine64", ["/usr/lib/wine"]);
const wineserver = findTool("wineserver", ["/usr/lib/wine"]);
const req = requirements([
  { what: "wine64", ok: !!wine && !!wineserver, fix: "apt-get install -y wine64" },
]);

/** Z:\ is the Unix root in every Wine prefix. */
const win = (p: string) => "Z:" + p.replace(/\//g, "\\");

describe("windows-x64 under Wine", { skip: req.skip }, () => {
  const work = tempDir("hermit wine ");
  const reaper = new Reaper();
  const dir = (...p: string[]) => path.join(work.path, ...p);
  const bin = dir("win bin");
  const exe = path.join(bin, "hermit.exe");
  const smoke = dir("smoke adapter");
  const inner = dir("inner adapter");
  const created = dir("out & (x) !y! ^z 'q' =;,");
  // ping.exe runs as long as its count (one per second); a count of our own finds our processes.
  const pings = 400 + Math.floor(Math.random() * 500);
  let env: Record<string, string> = {};
  let seq = 0;

  /** hermit.exe with `args`, stdin from a file holding `input`. */
  function hermit(args: string[], input = ""): ChildProcess {
    const file = dir(`stdin-${++seq}`);
    writeFileSync(file, input);
    const fd = openSync(file, "r");
    const child = spawn(wine!, [exe, ...args], { env, cwd: work.path, stdio: [fd, "pipe", "pipe"] });
    reaper.track(child.pid);
    return child;
  }
  const run = (args: string[], input = "", timeoutMs = 120_000) =>
    collect(hermit(args, input), undefined, timeoutMs, `hermit.exe ${args.join(" ")}`);

  /** Linux pids of this prefix's Windows processes whose command line contains `text`. */
  const processes = (text: string) =>
    readdirSync("/proc").filter((d) => /^\d+$/.test(d)).map(Number).filter((p) => cmdline(p).includes(text));

  before(async () => {
    req.assertReady();
    mkdirSync(bin);
    const built = await buildTarget("windows-x64", dir("build"));
    writeFileSync(exe, readFileSync(built));
    writeFileSync(path.join(bin, "bcryptprimitives.dll"), bcryptPrimitivesDll());
    // What npm installs on Windows: a batch file that forwards its arguments (%*) to a program.
    writeFileSync(path.join(bin, "npx.cmd"), '@"%~dp0hermit.exe" %*\r\n');
    env = {
      PATH: "/usr/bin:/bin",
      HOME: dir(),
      WINEPREFIX: dir("prefix"),
      WINEDEBUG: "-all",
      WINEDLLOVERRIDES: "winemenubuilder.exe=d;mscoree,mshtml=", // no desktop menus, no Mono/Gecko
      WINEPATH: win(bin),
    };
    writeAdapters();
    // Create the prefix once (a few seconds), so the tests time hermit, not Wine's first boot.
    const boot = await collect(
      spawn(wine!, ["wineboot", "--init"], { env, stdio: "pipe" }),
      undefined,
      120_000,
      "wineboot",
    );
    assert.equal(boot.code, 0, boot.stderr);
  });

  /** The smoke adapter (command tools of every kind, an npx upstream) and the upstream adapter. */
  function writeAdapters() {
    const yaml = (v: unknown) => JSON.stringify(v); // JSON is YAML
    mkdirSync(path.join(smoke, "tools"), { recursive: true });
    mkdirSync(inner);
    const tool = (run: string[], extra = "") =>
      `    description: a tool\n    input: { type: object }\n    run: ${
        yaml(run)
      }\n    read_only: true\n${extra}`;
    writeFileSync(
      path.join(smoke, "hermit.yaml"),
      [
        "name: smoke",
        "version: 0.1.0",
        "description: Windows smoke test",
        "exports:",
        "  tools: [version, args, forwarded, slow, brief, inner_version]",
        "tools:",
        "  version:",
        tool(["hermit", "--version"]), // hermit.exe, found on PATH through PATHEXT
        "  args:",
        tool(["tools\\args.cmd", "a b", "x&y", "(p) !q! ^r", 'say "hi"']),
        "  forwarded:",
        tool(["tools\\fwd.cmd", "init", win(created)]),
        "  slow:",
        tool(["tools\\sleep.cmd"], "    timeout: 600\n"),
        "  brief:",
        tool(["tools\\sleep3.cmd"], "    timeout: 2\n"), // stopped past its timeout: the tree goes
        "mcp_servers:",
        "  inner:",
        "    command: npx", // npx.cmd on PATH, run through cmd.exe
        `    args: ${yaml(["serve", win(inner)])}`,
        "    prefix: inner_",
        "",
      ].join("\n"),
    );
    writeFileSync(path.join(smoke, "tools", "args.cmd"), "@echo off\r\necho [%1] [%2] [%3] [%4]\r\n");
    writeFileSync(path.join(smoke, "tools", "fwd.cmd"), `@"${win(exe)}" %*\r\n`);
    writeFileSync(path.join(smoke, "tools", "sleep.cmd"), `@ping -n ${pings} 127.0.0.1 >NUL\r\n`);
    writeFileSync(path.join(smoke, "tools", "sleep2.cmd"), `@ping -n ${pings + 1} 127.0.0.1 >NUL\r\n`);
    writeFileSync(path.join(smoke, "tools", "sleep3.cmd"), `@ping -n ${pings + 2} 127.0.0.1 >NUL\r\n`);
    writeFileSync(
      path.join(inner, "hermit.yaml"),
      "name: inner\nversion: 0.1.0\ndescription: the upstream\nexports:\n  tools: [version]\ntools:\n  version:\n" +
        tool(["hermit", "--version"]),
    );
  }

  after(async () => {
    await reaper.reap();
    if (wineserver && existsSync(dir("prefix"))) {
      await collect(spawn(wineserver, ["-k"], { env, stdio: "pipe" }), undefined, 30_000, "wineserver -k")
        .catch(() => {});
    }
    work.cleanup();
  });

  it("--version", async () => {
    const r = await run(["--version"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), `hermit ${version}`);
  });

  it("init writes an adapter that check finds healthy, live start included", async () => {
    const target = dir("my adapters", "hello tools");
    const init = await run(["init", win(target)]);
    assert.equal(init.code, 0, init.stderr);
    assert.deepEqual(readdirSync(target).sort(), ["CONTEXT.md", "hermit.yaml", "tools"]);
    assert.deepEqual(readdirSync(path.join(target, "tools")), ["hello.ps1"], "Windows gets PowerShell");
    const check = await run(["check", win(target)]);
    assert.equal(check.code, 0, `${check.stdout}\n${check.stderr}`);
    assert.match(
      check.stdout,
      /live: initialize answered in \d+ ms; tools\/list matches exports\.tools \(1 tool\)/,
    );
  });

  it("serve answers tools/list and calls of .exe, .cmd and npx-upstream tools", async () => {
    const call = (name: string) => ({ method: "tools/call", params: { name, arguments: {} } });
    const r = await run(
      ["serve", win(smoke)],
      mcpInput([
        { method: "tools/list" },
        call("version"),
        call("args"),
        call("forwarded"),
        call("inner_version"),
        call("brief"),
      ]),
    );
    assert.equal(r.code, 0, r.stderr);
    const got = responses(r.stdout);
    const names = (got.get(2)?.result?.tools as { name: string }[] | undefined)?.map((t) => t.name);
    assert.deepEqual(names, ["version", "args", "forwarded", "slow", "brief", "inner_version"], r.stderr);
    assert.equal(callText(got.get(3)), `hermit ${version}`);
    // Each argument arrives whole at the batch file, quoted (cmd.exe's %1 keeps the quotes).
    assert.equal(callText(got.get(4)), '["a b"] ["x&y"] ["(p) !q! ^r"] ["say ""hi"""]');
    // Through a %*-forwarding .cmd to hermit.exe: the path argument arrives exactly.
    assert.equal(got.get(5)?.result?.isError, undefined, callText(got.get(5)));
    assert.ok(existsSync(path.join(created, "hermit.yaml")), callText(got.get(5)));
    assert.equal(callText(got.get(6)), `hermit ${version}`, r.stderr);
    // Past its timeout a tool's tree is ended: cmd.exe and the ping.exe it started.
    assert.equal(got.get(7)?.result?.isError, true, `${r.stdout}\n${r.stderr}`);
    assert.match(callText(got.get(7)), /timed out|timeout/i);
    assert.deepEqual(processes(`ping -n ${pings + 2} `), [], "ping.exe of the timed-out tool is gone");
    // no sandbox on Windows: one line per entry that ran says so, and everything still works
    // (the inner hermit's own lines come prefixed with [inner])
    for (
      const entry of ["tools.version", "tools.args", "tools.forwarded", "tools.brief", "mcp_servers.inner"]
    ) {
      const lines = r.stderr.split("\n").filter((l) =>
        l.startsWith(`hermit: warn: ${entry}: sandbox: not enforced here:`)
      );
      assert.equal(lines.length, 1, `${entry}: ${r.stderr}`);
      assert.match(lines[0], /nothing is enforced \(no sandbox on Windows\)/);
    }
  });

  it("the lock: a pid file with pid and creation time; a reused or dead pid is taken over, a live one not", async () => {
    const probe = path.join(bin, "lockprobe.exe");
    const built = await runCommand(bunPath()!, [
      "build",
      "--compile",
      "--target=bun-windows-x64",
      path.join(fixtures, "windows", "lock_probe.ts"),
      "--outfile",
      probe,
    ], { timeoutMs: 120_000 });
    assert.equal(built.code, 0, built.stderr);
    const child = spawn(wine!, [probe, win(dir("probe.lock"))], { env, stdio: ["ignore", "pipe", "pipe"] });
    reaper.track(child.pid);
    const r = await collect(child, undefined, 60_000, "lockprobe.exe");
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.match(out.me, /^\d+ \d{17,}$/, "pid and a FILETIME creation time");
    assert.deepEqual(
      [out.staleTakenOver, out.liveRefused, out.released, out.deadTakenOver],
      [true, true, true, true],
      r.stdout,
    );
  });

  it("when hermit is killed outright, its child's whole tree goes, and watchdog --ppid notices", async () => {
    const serve = hermit(
      ["serve", win(smoke)],
      mcpInput([{ method: "tools/call", params: { name: "slow", arguments: {} } }]),
    );
    let stderr = "";
    serve.stderr!.setEncoding("utf8").on("data", (d) => (stderr += d));
    // hermit.exe → cmd.exe (sleep.cmd) → ping.exe: a grandchild, which no job object ends.
    await waitFor(() => processes(`ping -n ${pings} `).length === 1, { timeoutMs: 60_000, what: "ping.exe" });
    const tree = [...processes(`ping -n ${pings} `), ...processes(`${win(smoke)}\\tools\\sleep.cmd`)];
    const supervisors = processes(`${win(exe)} watchdog --ppid `);
    assert.equal(supervisors.length, 1, "serve started one watchdog");
    assert.equal(tree.length, 2, "cmd.exe and ping.exe");
    // The supervisor's command line names hermit's Windows pid: watch it with a second watchdog.
    const ppid = /--ppid (\d+)/.exec(cmdline(supervisors[0]))![1];
    const watchdog = hermit([
      "watchdog",
      "--ppid",
      ppid,
      "--poll",
      "0.2",
      "--",
      win(path.join(smoke, "tools", "sleep2.cmd")),
    ]);
    const watched = collect(watchdog, undefined, 60_000, "hermit.exe watchdog");
    await waitFor(() => processes(`ping -n ${pings + 1} `).length === 1, {
      timeoutMs: 60_000,
      what: "ping.exe 2",
    });
    const tree2 = processes(`ping -n ${pings + 1} `);

    process.kill(serve.pid!, "SIGKILL");
    const all = [...tree, ...tree2, ...supervisors];
    await waitFor(() => all.every((p) => !existsSync(`/proc/${p}`) || cmdline(p) === ""), {
      timeoutMs: 30_000,
      what: `every process of the trees to end (left: ${
        all.filter((p) => existsSync(`/proc/${p}`)).map(cmdline)
      })`,
    });
    const w = await watched;
    assert.notEqual(w.code, null);
    assert.match(w.stderr, new RegExp(`watchdog: parent ${ppid} is gone`), w.stderr);
    assert.match(
      stderr,
      /watchdog: parent \d+ closed the pipe; stopping 2 process group\(s\)/,
      "the upstream and the tool",
    );
  });
});
