/**
 * The command line as users meet it, through the compiled binary: version, help, usage errors and
 * their exit codes, how long `--version` takes to answer, and Ctrl-C during a command.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { hermitBin, hermitEnv, root, runHermit, type RunResult } from "../helpers/hermit.ts";
import { alive, cmdline, descendants, kill, Reaper, waitFor } from "../helpers/procs.ts";
import { tempDir } from "../helpers/tmp.ts";

const VERSION: string = JSON.parse(readFileSync(path.join(root, "deno.json"), "utf8")).version;
const STACK_LINE = /^\s+at /m;

/** The commands every build has; `--help` may list more as they are added. */
const CORE_COMMANDS = ["init", "check", "watchdog", "help"];

/** Long options each command must document in its `--help`. */
const COMMAND_OPTIONS: Record<string, string[]> = {
  init: ["--json", "--help"],
  check: ["--json", "--help"],
  watchdog: ["--ppid", "--grace", "--poll", "--help"],
};

/** The entries of a help section (`Commands:` or `Options:`): the first word of each entry line. */
function section(help: string, title: string): string[] {
  const lines = help.split("\n");
  const start = lines.indexOf(`${title}:`);
  assert.notEqual(start, -1, `no '${title}:' section in:\n${help}`);
  const out: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === "") break;
    const m = /^ {2}(\S.*)$/.exec(line); // entries are indented by two; wrapped text by more
    if (m) out.push(m[1]);
  }
  return out;
}

const commandsIn = (help: string) => section(help, "Commands").map((e) => e.split(/\s+/)[0]);
const longOptionsIn = (help: string) =>
  section(help, "Options").flatMap((e) => [...e.matchAll(/(?:^|, )(--[a-z][\w-]*)/g)].map((m) => m[1]));

function assertUsageError(r: RunResult, firstLine: string | RegExp, what: string): void {
  assert.equal(r.code, 2, `${what}: exit code (stderr: ${r.stderr})`);
  if (what.includes("--json")) {
    // with --json the error is also a JSON object on stdout
    assert.equal(JSON.parse(r.stdout).error.exit_code, 2, `${what}: the JSON error on stdout`);
  } else assert.equal(r.stdout, "", `${what}: nothing on stdout`);
  const lines = r.stderr.trimEnd().split("\n");
  if (typeof firstLine === "string") assert.equal(lines[0], firstLine, what);
  else assert.match(lines[0], firstLine, what);
  assert.doesNotMatch(r.stderr, STACK_LINE, `${what}: no stack trace`);
}

describe("hermit --version", () => {
  for (const flag of ["--version", "-V"]) {
    test(`${flag} prints 'hermit ${VERSION}' and nothing else`, async () => {
      const r = await runHermit([flag]);
      assert.equal(r.code, 0);
      assert.equal(r.stdout, `hermit ${VERSION}\n`);
      assert.equal(r.stderr, "");
    });
  }

  test("start-up time of --version (measured, not asserted)", async () => {
    const runs = 20;
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      const r = await runHermit(["--version"]);
      times.push(performance.now() - t0);
      assert.equal(r.code, 0);
    }
    times.sort((a, b) => a - b);
    const median = (times[runs / 2 - 1] + times[runs / 2]) / 2;
    console.error(
      `# hermit --version start-up over ${runs} runs (spawn to exit): median ${median.toFixed(1)} ms, ` +
        `min ${times[0].toFixed(1)} ms, max ${times[runs - 1].toFixed(1)} ms`,
    );
  });
});

describe("hermit help", () => {
  test("--help, -h and 'help' print the same help on stdout and exit 0", async () => {
    const outs: string[] = [];
    for (const args of [["--help"], ["-h"], ["help"], ["help", "help"]]) {
      const r = await runHermit(args);
      assert.equal(r.code, 0, `hermit ${args.join(" ")}: ${r.stderr}`);
      assert.equal(r.stderr, "", `hermit ${args.join(" ")}`);
      assert.match(r.stdout, /^Usage: hermit /);
      outs.push(r.stdout);
    }
    for (const out of outs) assert.equal(out, outs[0]);
    const commands = commandsIn(outs[0]);
    for (const c of CORE_COMMANDS) assert.ok(commands.includes(c), `'${c}' listed in:\n${outs[0]}`);
    assert.deepEqual(longOptionsIn(outs[0]).sort(), ["--help", "--version"]);
    assert.match(outs[0], /Exit codes: 0 ok/);
  });

  test("every command --help lists exists and documents its options", async () => {
    const top = await runHermit(["--help"]);
    const commands = commandsIn(top.stdout);
    assert.ok(commands.length >= CORE_COMMANDS.length);
    for (const cmd of commands) {
      const viaFlag = await runHermit([cmd, "--help"]);
      assert.equal(viaFlag.code, 0, `hermit ${cmd} --help: ${viaFlag.stderr}`);
      assert.equal(viaFlag.stderr, "", `hermit ${cmd} --help`);
      const viaHelp = await runHermit(["help", cmd]);
      assert.equal(viaHelp.code, 0, `hermit help ${cmd}: ${viaHelp.stderr}`);
      assert.equal(viaHelp.stdout, viaFlag.stdout, `hermit help ${cmd} = hermit ${cmd} --help`);
      if (cmd === "help") {
        assert.equal(viaFlag.stdout, top.stdout);
        continue;
      }
      assert.match(viaFlag.stdout, new RegExp(`^Usage: hermit ${cmd} `), `hermit ${cmd} --help`);
      const options = longOptionsIn(viaFlag.stdout);
      for (const o of COMMAND_OPTIONS[cmd] ?? ["--help"]) {
        assert.ok(options.includes(o), `hermit ${cmd} --help lists ${o}:\n${viaFlag.stdout}`);
      }
    }
  });

  test("watchdog --help does not show the internal --supervise", async () => {
    const r = await runHermit(["watchdog", "--help"]);
    assert.equal(r.code, 0);
    assert.doesNotMatch(r.stdout, /--supervise/);
    assert.match(r.stdout, /--ppid/);
  });

  test("no arguments: the help on stderr, exit 2 (a usage error, nothing for a script on stdout)", async () => {
    const r = await runHermit([]);
    assert.equal(r.code, 2);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, /^Usage: hermit /);
    for (const c of CORE_COMMANDS) assert.ok(commandsIn(r.stderr).includes(c));
  });
});

describe("usage errors exit 2 with one error line on stderr", () => {
  test("unknown command", async () => {
    // a word close to no command gets no suggestion
    const r = await runHermit(["zzyzx"]);
    assertUsageError(r, "error: unknown command 'zzyzx'; 'hermit --help' lists the commands", "hermit zzyzx");
    assert.equal(r.stderr, "error: unknown command 'zzyzx'; 'hermit --help' lists the commands\n");
  });

  test("unknown command close to a real one gets a suggestion", async () => {
    for (const args of [["chek"], ["help", "chek"], ["chek", "--json"]]) {
      const r = await runHermit(args);
      assertUsageError(
        r,
        "error: unknown command 'chek'; 'hermit --help' lists the commands",
        `hermit ${args.join(" ")}`,
      );
      assert.match(r.stderr, /Did you mean check\?/);
      assert.ok(r.stderr.trimEnd().split("\n").length <= 2, r.stderr);
    }
  });

  test("'help' for an unknown command is an unknown command, not the whole help", async () => {
    const r = await runHermit(["help", "bogus"]);
    assertUsageError(
      r,
      "error: unknown command 'bogus'; 'hermit --help' lists the commands",
      "hermit help bogus",
    );
    assert.doesNotMatch(r.stderr, /Usage:/);
  });

  test("unknown options, at the top and on a command", async () => {
    assertUsageError(await runHermit(["--bogus"]), "error: unknown option '--bogus'", "hermit --bogus");
    assertUsageError(
      await runHermit(["init", "--bogus"]),
      "error: unknown option '--bogus'",
      "hermit init --bogus",
    );
    const r = await runHermit(["check", "--jsn"]);
    assertUsageError(r, "error: unknown option '--jsn'", "hermit check --jsn");
    assert.match(r.stderr, /Did you mean --json\?/);
  });

  test("too many arguments, a missing required option, a bad option value", async () => {
    assertUsageError(
      await runHermit(["init", "a", "b"]),
      /^error: too many arguments for 'init'/,
      "init a b",
    );
    assertUsageError(
      await runHermit(["check", "a", "b", "--json"]),
      /^error: too many arguments for 'check'/,
      "check a b --json",
    );
    assertUsageError(
      await runHermit(["watchdog", "--", "true"]),
      /^error: required option '--ppid <pid>' not specified/,
      "watchdog without --ppid",
    );
    assertUsageError(
      await runHermit(["watchdog", "--ppid", "x", "--", "true"]),
      "error: --ppid must be a process id, got 'x'",
      "watchdog --ppid x",
    );
  });
});

describe("Ctrl-C", () => {
  test("hermit call interrupted: its tool is stopped before hermit ends, exit 130, no watchdog warning", async () => {
    const tmp = tempDir();
    const reaper = new Reaper();
    try {
      writeFileSync(
        path.join(tmp.path, "hermit.yaml"),
        `name: slow
exports: { tools: [wait] }
tools:
  wait:
    description: Waits
    run: [sleep, "61"]
`,
      );
      const child = spawn(hermitBin(), ["call", tmp.path, "wait"], {
        env: hermitEnv() as Record<string, string>,
        stdio: ["ignore", "pipe", "pipe"],
      });
      reaper.track(child.pid);
      let stderr = "";
      child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
      child.stdout.resume();
      const tool = await waitFor(
        () => descendants(child.pid!).find((p) => cmdline(p).endsWith("sleep 61")),
        { timeoutMs: 10_000, what: "the tool to start" },
      );
      reaper.track(tool);
      const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
        child.once("exit", (code, signal) => resolve({ code, signal }))
      );
      // stderr complete (the watchdog shares it); listened for now: it may come right after the exit
      const closed = new Promise((r) => child.once("close", r));
      kill(child.pid!, "SIGINT"); // what a terminal sends on Ctrl-C
      const end = await exited;
      const toolAlive = alive(tool); // at hermit's own end, not after the watchdog's
      await closed;
      assert.equal(end.code ?? (end.signal === "SIGINT" ? 130 : end.signal), 130, stderr);
      assert.equal(toolAlive, false, "the tool is stopped before hermit ends");
      assert.equal(stderr, "", "nothing said after Ctrl-C (no watchdog warning after the prompt)");
    } finally {
      await reaper.reap();
      tmp.cleanup();
    }
  });
});
