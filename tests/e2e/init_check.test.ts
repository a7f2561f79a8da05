/**
 * `hermit init` and `hermit check` as users run them, through the compiled binary: what init
 * writes (and refuses to overwrite), that its tool works and checks healthy, how check reports
 * problems and invalid manifests, stdout/stderr discipline, and output that survives a pipe.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fixtures, flavors, hermitArgv, runCommand, runHermit, type RunResult } from "../helpers/hermit.ts";
import { collect } from "../helpers/procs.ts";
import { tempDir } from "../helpers/tmp.ts";

const STACK_LINE = /^\s+at /m;
const INIT_FILES = ["hermit.yaml", "CONTEXT.md", "tools/hello.sh"];

let tmp: { path: string; cleanup(): void };
let n = 0;
/** A fresh directory for one test (which may create, or not, the adapter inside it). */
const scratch = () => {
  const dir = path.join(tmp.path, `t${++n}`);
  mkdirSync(dir);
  return dir;
};
/** A private copy of a fixture under `tests/fixtures/cli/`, inside a fresh scratch directory. */
const copyFixture = (name: string) => {
  const cwd = scratch();
  cpSync(path.join(fixtures, "cli", name), path.join(cwd, name), { recursive: true });
  return cwd;
};

before(() => {
  tmp = tempDir("hermit-e2e-init-");
});
after(() => tmp.cleanup());

/** Every file under `dir` with its bytes. */
function snapshot(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (rel: string) => {
    for (const e of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const r = path.join(rel, e.name);
      if (e.isDirectory()) walk(r);
      else out.set(r, readFileSync(path.join(dir, r)));
    }
  };
  walk("");
  return out;
}

function parseJsonOut(r: RunResult, what: string): Record<string, unknown> {
  try {
    return JSON.parse(r.stdout);
  } catch (err) {
    assert.fail(`${what}: stdout is not one JSON document (${err}):\n${r.stdout.slice(0, 2000)}`);
  }
}

/** An error run: the exit code, nothing on stdout, only `error: …` lines on stderr, no stack. */
function assertFailed(r: RunResult, code: number, what: string): string[] {
  assert.equal(r.code, code, `${what}: exit code (stderr: ${r.stderr})`);
  if (what.includes("--json")) {
    // with --json the error is a JSON object on stdout as well: the same lines, the same code
    const { error } = JSON.parse(r.stdout);
    assert.equal(error.exit_code, code, `${what}: the JSON error's exit code`);
    assert.deepEqual(
      error.message.split("\n").map((l: string) => `error: ${l}`),
      r.stderr.trimEnd().split("\n"),
      `${what}: the JSON error says what stderr says`,
    );
  } else assert.equal(r.stdout, "", `${what}: nothing on stdout`);
  assert.doesNotMatch(r.stderr, STACK_LINE, `${what}: no stack trace`);
  const lines = r.stderr.trimEnd().split("\n");
  for (const line of lines) assert.match(line, /^error: \S/, `${what}: stderr line '${line}'`);
  return lines;
}

describe("hermit init", () => {
  test("writes hermit.yaml, CONTEXT.md and an executable tools/hello.sh, named after the directory", async () => {
    const cwd = scratch();
    const r = await runHermit(["init", "My Tools!"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, "");
    const dir = path.join(cwd, "My Tools!");
    assert.deepEqual([...snapshot(dir).keys()].sort(), [...INIT_FILES].sort());
    assert.ok((statSync(path.join(dir, "tools/hello.sh")).mode & 0o111) !== 0, "hello.sh is executable");
    assert.match(readFileSync(path.join(dir, "hermit.yaml"), "utf8"), /^name: my-tools$/m);
    assert.match(
      r.stdout,
      /created adapter 'my-tools' in My Tools!: hermit\.yaml, CONTEXT\.md, tools\/hello\.sh/,
    );
    // the suggested next command works when pasted into a shell
    assert.match(r.stdout, /^next: hermit check 'My Tools!'$/m);
  });

  test("--json prints {dir, name, files} and nothing else", async () => {
    const cwd = scratch();
    const r = await runHermit(["init", "notes", "--json"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, "");
    const out = parseJsonOut(r, "init --json");
    assert.deepEqual(Object.keys(out).sort(), ["dir", "files", "name"]);
    assert.equal(realpathSync(out.dir as string), realpathSync(path.join(cwd, "notes")));
    assert.ok(path.isAbsolute(out.dir as string));
    assert.equal(out.name, "notes");
    assert.deepEqual(out.files, INIT_FILES);
  });

  test("without a directory it initializes the current one; missing parents are created", async () => {
    const cwd = path.join(scratch(), "proj");
    mkdirSync(cwd);
    const r = await runHermit(["init"], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /created adapter 'proj' in \.:/);
    assert.match(r.stdout, /^next: hermit check \.$/m);
    for (const f of INIT_FILES) assert.ok(existsSync(path.join(cwd, f)), f);

    const nested = await runHermit(["init", "a/b/c", "--json"], { cwd: scratch() });
    assert.equal(nested.code, 0, nested.stderr);
    assert.equal(parseJsonOut(nested, "init a/b/c").name, "c");
  });

  test("adapter names derived from odd directory names are valid and check healthy", async () => {
    const cases: [string, string][] = [
      ["My Tools!", "my-tools"],
      ["Café Ünïcode", "cafe-unicode"],
      ["snake_case.dir", "snake-case-dir"],
      ["123", "123"], // YAML would read an unquoted 123 as a number
      ["null", "null"], // … and null as null
      ["___", "my-adapter"],
      ["x".repeat(70), "x".repeat(48)], // mcp__<name>__hello stays within Cursor's 60
    ];
    const cwd = scratch();
    for (const [dir, name] of cases) {
      const r = await runHermit(["init", dir, "--json"], { cwd });
      assert.equal(r.code, 0, `init '${dir}': ${r.stderr}`);
      assert.equal(parseJsonOut(r, `init '${dir}'`).name, name, `name for '${dir}'`);
      const c = await runHermit(["check", dir, "--json"], { cwd });
      assert.equal(c.code, 0, `check '${dir}': ${c.stdout}${c.stderr}`);
      const report = parseJsonOut(c, `check '${dir}'`);
      assert.equal(report.adapter, name);
      assert.equal(report.warnings, 0, `no warnings for '${dir}': ${c.stdout}`);
    }
  });

  test("refuses a directory that already has hermit.yaml: exit 2, nothing overwritten", async () => {
    const cwd = scratch();
    assert.equal((await runHermit(["init", "mine"], { cwd })).code, 0);
    const dir = path.join(cwd, "mine");
    writeFileSync(path.join(dir, "hermit.yaml"), "name: mine\n# my own edits\n");
    writeFileSync(path.join(dir, "tools/hello.sh"), "#!/bin/sh\necho mine\n");
    const before = snapshot(dir);
    for (const args of [["init", "mine"], ["init", "mine", "--json"]]) {
      const r = await runHermit(args, { cwd });
      const lines = assertFailed(r, 2, `hermit ${args.join(" ")}`);
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0], /mine\/hermit\.yaml.* already exist/);
      assert.match(lines[0], /nothing was written/);
      assert.match(lines[0], /hermit check mine/);
      assert.deepEqual(snapshot(dir), before, "every byte unchanged");
    }
  });

  test("refuses when any file it would write exists, and writes none of the others", async () => {
    const cwd = scratch();
    const dir = path.join(cwd, "has-context");
    mkdirSync(dir);
    writeFileSync(path.join(dir, "CONTEXT.md"), "my context\n");
    const r = await runHermit(["init", "has-context"], { cwd });
    const lines = assertFailed(r, 2, "init over CONTEXT.md");
    assert.match(lines[0], /has-context\/CONTEXT\.md already exists; nothing was written/);
    assert.deepEqual([...snapshot(dir).keys()], ["CONTEXT.md"]);
    assert.equal(readFileSync(path.join(dir, "CONTEXT.md"), "utf8"), "my context\n");
  });

  test("a file where the directory should be: exit 2, a clear message, nothing written", async () => {
    const cwd = scratch();
    writeFileSync(path.join(cwd, "afile"), "x");
    assert.match(assertFailed(await runHermit(["init", "afile"], { cwd }), 2, "init afile")[0], /is a file/);
    const r = await runHermit(["init", "afile/sub"], { cwd });
    assert.match(assertFailed(r, 2, "init afile/sub")[0], /cannot create the adapter in afile\/sub/);
    mkdirSync(path.join(cwd, "tools-is-a-file"));
    writeFileSync(path.join(cwd, "tools-is-a-file", "tools"), "x");
    assertFailed(await runHermit(["init", "tools-is-a-file"], { cwd }), 2, "init with tools a file");
    assert.deepEqual([...snapshot(path.join(cwd, "tools-is-a-file")).keys()], ["tools"]);
  });

  test("the generated hello tool works", async () => {
    const cwd = scratch();
    assert.equal((await runHermit(["init", "hello"], { cwd })).code, 0);
    const dir = path.join(cwd, "hello");
    const cases: [string, string][] = [
      ['{"name":"Ada"}', "Hello, Ada!\n"],
      ['{ "name" : "Grace Hopper" }', "Hello, Grace Hopper!\n"],
      ["{}", "Hello, world!\n"],
    ];
    for (const [input, expected] of cases) {
      const viaSh = await runCommand("sh", ["tools/hello.sh"], { cwd: dir, input });
      assert.equal(viaSh.code, 0, viaSh.stderr);
      assert.equal(viaSh.stdout, expected, `sh tools/hello.sh <<< ${input}`);
      const direct = await runCommand(path.join(dir, "tools/hello.sh"), [], { cwd: dir, input });
      assert.equal(direct.stdout, expected, `tools/hello.sh <<< ${input}`);
    }
  });
});

describe("hermit check", () => {
  test("after init: exit 0, healthy, in words and in JSON", async () => {
    const cwd = scratch();
    assert.equal((await runHermit(["init", "fresh"], { cwd })).code, 0);
    const human = await runHermit(["check", "fresh"], { cwd });
    assert.equal(human.code, 0, human.stdout + human.stderr);
    assert.equal(human.stderr, "");
    assert.match(human.stdout, /^hermit check: fresh 0\.1\.0$/m);
    assert.match(human.stdout, /^healthy \(0 problems, 0 warnings\)$/m);

    const json = await runHermit(["check", "fresh", "--json"], { cwd });
    assert.equal(json.code, 0);
    assert.equal(json.stderr, "");
    const report = parseJsonOut(json, "check --json");
    assert.equal(report.verdict, "healthy");
    assert.equal(report.adapter, "fresh");
    assert.equal(report.problems, 0);
    assert.ok(Array.isArray(report.findings));
  });

  test("without a directory it checks the current one; a path to hermit.yaml works too", async () => {
    const cwd = scratch();
    assert.equal((await runHermit(["init", "here"], { cwd })).code, 0);
    const r = await runHermit(["check", "--json"], { cwd: path.join(cwd, "here") });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(parseJsonOut(r, "check in cwd").adapter, "here");
    const file = await runHermit(["check", "here/hermit.yaml"], { cwd });
    assert.equal(file.code, 0, file.stdout + file.stderr);
  });

  test("problems: exit 3, verdict 'problems', findings located at file:line:col", async () => {
    const cwd = copyFixture("problems");
    const text = readFileSync(path.join(cwd, "problems", "hermit.yaml"), "utf8").split("\n");
    const lineOf = (needle: string) => text.findIndex((l) => !l.startsWith("#") && l.includes(needle)) + 1;

    const human = await runHermit(["check", "problems", "--static"], { cwd });
    assert.equal(human.code, 3, human.stdout + human.stderr);
    assert.equal(human.stderr, "");
    assert.match(human.stdout, /^problems found \(2 problems, 0 warnings\)$/m);
    assert.match(
      human.stdout,
      new RegExp(`problem {2}problems/hermit\\.yaml:${lineOf("nothing")}:\\d+: .*'nothing'`),
    );

    const json = await runHermit(["check", "problems", "--json", "--static"], { cwd });
    assert.equal(json.code, 3);
    assert.equal(json.stderr, "");
    const report = parseJsonOut(json, "check --json") as {
      verdict: string;
      problems: number;
      findings: { level: string; message: string; at?: string }[];
    };
    assert.equal(report.verdict, "problems");
    assert.equal(report.problems, 2);
    const problems = report.findings.filter((f) => f.level === "problem");
    for (const f of problems) assert.match(f.at ?? "", /^problems\/hermit\.yaml:\d+:\d+$/, f.message);
    const at = (needle: string) => problems.find((f) => f.message.includes(needle))?.at;
    assert.match(at("'nothing'") ?? "missing", new RegExp(`:${lineOf("nothing")}:\\d+$`));
    assert.match(at("MISSING.md") ?? "missing", new RegExp(`:${lineOf("MISSING.md")}:\\d+$`));
  });

  test("an invalid manifest: exit 2, exactly the located error lines on stderr, nothing on stdout", async () => {
    const cwd = copyFixture("invalid");
    const expected = [
      ["1:7", /\bname\b/],
      ["2:10", /\bversion\b/],
      ["7:10", /tools\.a\.run\b/],
      ["8:14", /tools\.a\.timeout\b/],
      ["9:1", /\bbogus\b/],
    ] as const;
    for (const json of [false, true]) {
      const r = await runHermit(["check", "invalid", ...(json ? ["--json"] : [])], { cwd });
      const lines = assertFailed(r, 2, `check invalid${json ? " --json" : ""}`);
      const located = lines.map((l) => /^error: invalid\/hermit\.yaml:(\d+:\d+): (.+)$/.exec(l));
      for (const [i, m] of located.entries()) assert.ok(m, `not a located error: '${lines[i]}'`);
      assert.deepEqual(located.map((m) => m![1]).sort(), expected.map(([loc]) => loc).sort(), r.stderr);
      for (const [loc, field] of expected) {
        assert.match(located.find((m) => m![1] === loc)![2], field, `the error at ${loc} names its field`);
      }
    }
  });

  test("unparsable YAML: exit 2, one located error", async () => {
    const cwd = copyFixture("broken-yaml");
    const lines = assertFailed(await runHermit(["check", "broken-yaml"], { cwd }), 2, "check broken-yaml");
    assert.equal(lines.length, 1);
    assert.match(lines[0], /^error: broken-yaml\/hermit\.yaml:\d+:\d+: not valid YAML/);
  });

  test("a missing directory or hermit.yaml: exit 2 and what to do", async () => {
    const cwd = scratch();
    mkdirSync(path.join(cwd, "empty"));
    for (const json of [[], ["--json"]]) {
      const nodir = assertFailed(
        await runHermit(["check", "nope", ...json], { cwd }),
        2,
        `check nope ${json}`,
      );
      assert.equal(nodir.length, 1);
      assert.match(nodir[0], /^error: nope: no such directory; .*adapter directory/); // … and what to pass
      const nofile = assertFailed(
        await runHermit(["check", "empty", ...json], { cwd }),
        2,
        `check empty ${json}`,
      );
      assert.equal(nofile.length, 1);
      assert.match(nofile[0], /^error: empty\/hermit\.yaml: not found; .*'hermit init empty'/); // … and how to make one
    }
    const inCwd = assertFailed(
      await runHermit(["check"], { cwd: path.join(cwd, "empty") }),
      2,
      "check in cwd",
    );
    assert.match(inCwd[0], /hermit\.yaml: not found; create one with 'hermit init/);
  });

  test("run from inside the adapter or from the project above it: the error names the adapter to pass", async () => {
    const cwd = scratch();
    assert.equal((await runHermit(["init", "my-tools"], { cwd })).code, 0);
    // in the adapter's tools/ folder: not 'hermit init' there (a second adapter inside the first)
    const inTools = assertFailed(
      await runHermit(["check"], { cwd: path.join(cwd, "my-tools", "tools") }),
      2,
      "check in tools/",
    );
    assert.deepEqual(inTools, [
      "error: hermit.yaml: not found; this directory is inside the adapter '..': pass that directory instead",
    ]);
    const named = assertFailed(
      await runHermit(["tools", "my-tools/tools"], { cwd }),
      2,
      "tools my-tools/tools",
    );
    assert.deepEqual(named, [
      "error: my-tools/tools/hermit.yaml: not found; my-tools/tools is inside the adapter 'my-tools': pass that directory instead",
    ]);
    // in the project, where `hermit init my-tools` ran: the adapter is one level down
    const above = assertFailed(
      await runHermit(["check", "--json"], { cwd }),
      2,
      "check --json in the project",
    );
    assert.deepEqual(above, [
      "error: hermit.yaml: not found; an adapter is in a directory below: pass 'my-tools'",
    ]);
    // a name a shell needs quoted: the one named is one word to paste
    assert.equal((await runHermit(["init", "it's mine"], { cwd })).code, 0);
    const quoted = assertFailed(await runHermit(["check"], { cwd }), 2, "check with two adapters below");
    assert.deepEqual(quoted, [
      "error: hermit.yaml: not found; adapters are in directories below: pass one of 'it'\\''s mine', 'my-tools'",
    ]);
    const inside = assertFailed(
      await runHermit(["check"], { cwd: path.join(cwd, "it's mine", "tools") }),
      2,
      "check in it's mine/tools",
    );
    assert.equal(
      inside[0],
      "error: hermit.yaml: not found; this directory is inside the adapter '..': pass that directory instead",
    );
  });
});

describe("output through a pipe", () => {
  const EXPORTS = 5000;
  let cwd: string;
  before(() => {
    cwd = scratch();
    const names = Array.from({ length: EXPORTS }, (_, i) => `    - not_provided_tool_number_${i}`);
    mkdirSync(path.join(cwd, "many"));
    writeFileSync(
      path.join(cwd, "many", "hermit.yaml"),
      `name: many\nexports:\n  tools:\n${names.join("\n")}\n`,
    );
  });

  for (const flavor of flavors()) {
    test(`check --json with ${EXPORTS} findings arrives whole (${flavor === "bin" ? "binary" : `${flavor} sources`})`, async () => {
      const r = await runHermit(["check", "many", "--json", "--static"], { cwd, flavor });
      assert.equal(r.code, 3, r.stderr);
      assert.equal(r.stderr, "");
      assert.ok(r.stdout.length > 1_000_000, `${r.stdout.length} bytes`);
      const report = parseJsonOut(r, "check many --json") as {
        findings: { at?: string }[];
        problems: number;
      };
      assert.equal(report.problems, EXPORTS);
      const last = report.findings.findLast((f) => f.at);
      assert.equal(last?.at, `many/hermit.yaml:${EXPORTS + 3}:7`);
    });
  }

  test("the human report arrives whole too", async () => {
    const r = await runHermit(["check", "many", "--static"], { cwd });
    assert.equal(r.code, 3, r.stderr);
    const lines = r.stdout.trimEnd().split("\n");
    assert.equal(lines.length, EXPORTS + 3); // title, manifest ok, one per export, verdict
    assert.match(lines.at(-1)!, new RegExp(`^problems found \\(${EXPORTS} problems, 0 warnings\\)$`));
  });

  for (const flavor of flavors()) {
    test(`a reader that goes away early is no error (${flavor === "bin" ? "binary" : `${flavor} sources`})`, async () => {
      const [cmd, ...pre] = hermitArgv(flavor);
      const child = spawn(cmd, [...pre, "check", "many", "--json", "--static"], {
        cwd,
        stdio: ["ignore", "pipe", "pipe"],
      });
      child.stdout.once("data", () => child.stdout.destroy());
      const { code, signal, stderr } = await collect(
        child,
        undefined,
        60_000,
        "check with an early-closing reader",
      );
      assert.doesNotMatch(stderr, STACK_LINE, stderr);
      assert.doesNotMatch(stderr, /EPIPE|Uncaught/, stderr);
      assert.ok(code === 3 || signal === "SIGPIPE", `exit ${code} / ${signal}`);
    });
  }
});
