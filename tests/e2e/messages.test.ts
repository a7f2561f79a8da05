/**
 * What a newcomer meets when something is wrong, through the compiled binary: bad call arguments,
 * YAML syntax errors, `--json` on errors, an adapter with no tools, a mistyped upstream command.
 * Each is one line that names the cause, where it is and what to do, with the documented exit code.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { runHermit, type RunResult } from "../helpers/hermit.ts";
import { tempDir } from "../helpers/tmp.ts";

const STACK_LINE = /^\s+at /m;
const tmp = tempDir("hermit-messages-");
after(() => tmp.cleanup());

let n = 0;
/** A directory under the test's temp dir holding `hermit.yaml` (and `files`); its relative name. */
function adapter(manifest: string, files: Record<string, string> = {}): string {
  const name = `a${++n}`;
  const dir = path.join(tmp.path, name);
  mkdirSync(dir);
  writeFileSync(path.join(dir, "hermit.yaml"), manifest);
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    writeFileSync(path.join(dir, f), text);
  }
  return name;
}

const run = (args: string[]) => runHermit(args, { cwd: tmp.path, timeoutMs: 90_000 });

/** Exactly one line on stderr, nothing on stdout, the exit code, no stack. */
function assertOneLine(r: RunResult, code: number, line: string | RegExp, what: string): void {
  assert.equal(r.code, code, `${what}: exit code\n${r.stdout}${r.stderr}`);
  assert.equal(r.stdout, "", `${what}: nothing on stdout`);
  const lines = r.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 1, `${what}: one line, got:\n${r.stderr}`);
  if (typeof line === "string") assert.equal(lines[0], line, what);
  else assert.match(lines[0], line, what);
  assert.doesNotMatch(r.stderr, STACK_LINE);
}

const HELLO = `name: greet
exports:
  tools: [hello]
tools:
  hello:
    description: Say hello to someone
    input:
      type: object
      properties:
        name: { type: string }
        times: { type: integer, minimum: 1 }
        style: { enum: [plain, loud] }
        who: { type: object, properties: { first: { type: string } }, required: [first] }
      required: [name]
      additionalProperties: false
    run: [sh, -c, "cat"]
`;

describe("hermit call with arguments that do not fit the tool's input", () => {
  const dir = adapter(HELLO);
  const cases: [string, string][] = [
    ['{"name": 42}', "name must be a string"],
    ["{}", "name is required"],
    ['{"name": "Ada", "times": 0}', "times must be at least 1"],
    ['{"name": "Ada", "times": 1.5}', "times must be an integer"],
    ['{"name": "Ada", "style": "quiet"}', "style must be one of: plain, loud"],
    [
      '{"name": "Ada", "colour": "red"}',
      "colour is not an argument of hello (its arguments: name, times, style, who)",
    ],
    ['{"name": "Ada", "who": {}}', "who.first is required"],
    ['{"name": "Ada", "who": {"first": 1}}', "who.first must be a string"],
  ];
  for (const [args, says] of cases) {
    it(`--args '${args}': "${says}" on stderr, exit 2`, async () => {
      const r = await run(["call", dir, "hello", "--args", args]);
      assertOneLine(r, 2, `error: invalid arguments for hello: ${says}`, args);
    });
  }

  it("the arguments that fit run the tool", async () => {
    const r = await run(["call", dir, "hello", "--args", '{"name": "Ada"}']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).name, "Ada");
  });
});

describe("YAML syntax errors: one line, the real cause, where it is and the fix", () => {
  /** What `hermit init` writes, with one line changed (found by its text); the text and that line's number. */
  const made = path.join(tmp.path, "made");
  let init = "";
  before(async () => {
    assert.equal((await run(["init", "made"])).code, 0);
    init = readFileSync(path.join(made, "hermit.yaml"), "utf8");
  });
  function variant(find: string, replace: string | ((l: string) => string)): { text: string; line: number } {
    const lines = init.split("\n");
    const i = lines.findIndex((l) => l.startsWith(find));
    assert.ok(i >= 0, `init's manifest has a line starting ${JSON.stringify(find)}`);
    lines[i] = typeof replace === "string" ? replace : replace(lines[i]);
    return { text: lines.join("\n"), line: i + 1 };
  }
  const describeLine = "    description: Say hello to someone";
  const cases: {
    what: string;
    make: () => { text: string; line: number };
    says: (line: number) => string;
  }[] = [
    {
      what: "a tab indenting a key deep in the file",
      make: () => variant(describeLine, "\tdescription: Say hello to someone"),
      says: (l) => `${l}:1: not valid YAML: a tab indents this line; indent with spaces`,
    },
    {
      what: "a tab indenting a key at the top",
      make: () => variant("  tools: [hello]", (l) => l.replace(/^ {2}/, "\t")),
      says: (l) => `${l}:1: not valid YAML: a tab indents this line; indent with spaces`,
    },
    {
      what: "spaces then a tab",
      make: () => variant("    read_only: true", "  \tread_only: true"),
      says: (l) => `${l}:3: not valid YAML: a tab indents this line; indent with spaces`,
    },
    {
      what: "a value containing ': '",
      make: () => variant(describeLine, "    description: Say hello: to someone"),
      says: (l) =>
        `${l}:18: not valid YAML: the value of description contains ': ', which YAML reads as a new key; quote the value: description: 'Say hello: to someone'`,
    },
    {
      what: "a value containing ': ' and an unclosed quote",
      make: () => variant("description: A new hermit adapter", 'description: Say hello: "to someone'),
      says: (l) =>
        `${l}:14: not valid YAML: the value of description contains ': ', which YAML reads as a new key; quote the value: description: 'Say hello: "to someone'`,
    },
    {
      what: "a quote that is never closed",
      make: () => variant("description: A new hermit adapter", 'description: "A new hermit adapter'),
      says: (l) =>
        `${l}:14: not valid YAML: the " opened here is never closed; end the value with " on the same line`,
    },
    {
      what: "a list that is never closed",
      make: () => variant("  tools: [hello]", "  tools: [hello"),
      says: (l) => `${l}:10: not valid YAML: the [ opened here is never closed; end the list with ]`,
    },
    {
      what: "a key indented differently from its neighbours",
      make: () => variant("  context: CONTEXT.md", (l) => " " + l),
      says: (l) =>
        `${l}:4: not valid YAML: this key is indented 3 spaces, its neighbours 2; keys of one mapping start in the same column`,
    },
    {
      what: "a value starting with a reserved character",
      make: () => variant("description: A new hermit adapter", "description: @team tools"),
      says: (l) =>
        `${l}:14: not valid YAML: a value cannot start with '@'; quote it: description: '@team tools'`,
    },
    {
      what: "a line ended by a carriage return alone (no colon left with nothing after it)",
      make: () => variant("description: A new hermit adapter", "description: >\r  A new hermit adapter"),
      says: (l) =>
        `${l}:15: not valid YAML: a carriage return (\\r) ends this line without a line feed; save the file with LF (or CRLF) line endings`,
    },
    {
      what: "an alias whose name does not show",
      make: () => variant("description: A new hermit adapter", "description: *\uFEFF"),
      says: (l) =>
        `${l}:14: not valid YAML: the alias * is followed by "\\ufeff", an invisible character, and names no anchor; remove it, or quote a value that starts with *`,
    },
    {
      what: "a key that appears twice",
      make: () => {
        const text = init + "name: again\n";
        return { text, line: text.split("\n").length - 1 };
      },
      says: (l) =>
        `${l}:1: not valid YAML: 'name' appears twice in this mapping (first on line ${
          init.split("\n").findIndex((x) => x.startsWith("name:")) + 1
        }); a key may appear only once, so remove or merge the repeat`,
    },
  ];
  for (const c of cases) {
    it(c.what, async () => {
      const { text, line } = c.make();
      const dir = adapter(text, { "CONTEXT.md": "hi\n", "tools/hello.sh": "echo hi\n" });
      for (const cmd of ["check", "tools"]) {
        const r = await run([cmd, dir]);
        assertOneLine(r, 2, `error: ${dir}/hermit.yaml:${c.says(line)}`, `${c.what} (${cmd})`);
      }
    });
  }
});

describe("--json on errors: a JSON error object on stdout, the exit code unchanged", () => {
  const broken = adapter("name: broken\nexports:\n  tools: [hello\n");
  for (
    const args of [
      ["check", broken, "--json"],
      ["check", broken, "--json", "--static"],
      ["tools", broken, "--json"],
      ["call", broken, "hello", "--json"],
      ["status", broken, "--json"],
      ["init", broken, "--json"],
      ["deploy", broken, ".", "--host", "claude", "--json"],
      ["convert", broken, "--host", "claude", "--json"],
      ["check", "no-such-dir", "--json"],
      ["check", broken, "--json", "--bogus"],
    ]
  ) {
    it(args.join(" "), async () => {
      const plain = await run(args.filter((a) => a !== "--json"));
      const r = await run(args);
      assert.equal(r.code, plain.code, `the exit code is the same as without --json\n${r.stderr}`);
      assert.notEqual(r.code, 0);
      const out = JSON.parse(r.stdout) as { error: { message: string; exit_code: number } };
      assert.equal(out.error.exit_code, r.code);
      assert.equal(`error: ${out.error.message.split("\n")[0]}`, plain.stderr.trimEnd().split("\n")[0]);
      assert.doesNotMatch(r.stderr, STACK_LINE);
    });
  }
});

describe("an adapter with no tools", () => {
  it("an empty file: the error says what it needs, as a missing exports does", async () => {
    const r = await run(["check", adapter("")]);
    assertOneLine(
      r,
      2,
      /^error: a\d+\/hermit\.yaml:1:1: the manifest is empty; it needs at least a name \(name: my-tools\), and exports: \{ tools: \[…\] \} to serve tools$/,
      "empty",
    );
  });

  for (
    const [what, text] of [
      ["no exports", "name: bare\n"],
      ["exports.tools: []", "name: bare\nexports:\n  tools: []\n"],
    ]
  ) {
    it(`${what}: check says it serves no tools, healthy with a warning, not "did not answer"`, async () => {
      const dir = adapter(text);
      const r = await run(["check", dir]);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.doesNotMatch(r.stdout, /did not answer|Method not found/);
      assert.match(r.stdout, /warning +a\d+\/hermit\.yaml:\d+:\d+: .*no tools/);
      assert.match(
        r.stdout,
        /ok +live: initialize answered in \d+ ms; it serves no tools, as exports\.tools says/,
      );
      assert.match(r.stdout, /^healthy \(0 problems, 1 warning\)$/m);
    });
  }
});

describe("a mistyped upstream command (command: npx-typo)", () => {
  const dir = adapter(`name: typo
exports:
  tools: [read_file]
mcp_servers:
  fs:
    command: npx-typo
    args: [-y, "@modelcontextprotocol/server-filesystem", "."]
`);
  const CAUSE =
    /mcp_servers\.fs could not be started: command not found: 'npx-typo' \(looked in PATH: [^)]+\)/;
  /** The noise a one-shot command must not make. */
  function quiet(text: string, what: string): void {
    assert.equal(text.split("looked in").length - 1, 1, `${what}: where it looked, once:\n${text}`);
    assert.doesNotMatch(text, /attempt \d|next in \d+ s|cooldown|PATH=/, what);
  }

  it("check: the cause is the one problem (no 'exported but not served', no retry talk); exit 3", async () => {
    const r = await run(["check", dir]);
    assert.equal(r.code, 3, r.stdout + r.stderr);
    assert.equal(r.stderr, "");
    const problems = r.stdout.split("\n").filter((l) => /^ {2}problem /.test(l));
    assert.equal(problems.length, 1, r.stdout);
    assert.match(problems[0], CAUSE);
    assert.match(problems[0], /; not served: read_file$/);
    assert.doesNotMatch(r.stdout, /exported but not served|warning +serve:/);
    quiet(r.stdout, "check");
  });

  it("tools: lists read_file missing with the cause, once; exit 3", async () => {
    const r = await run(["tools", dir]);
    assert.equal(r.code, 3, r.stdout + r.stderr);
    assert.match(r.stdout, new RegExp(`^missing: read_file: ${CAUSE.source}$`, "m"));
    assert.equal(r.stderr, "");
    quiet(r.stdout + r.stderr, "tools");
    const json = await run(["tools", dir, "--json"]);
    assert.equal(json.code, 3);
    assert.match(JSON.parse(json.stdout).missing[0].why, CAUSE);
  });

  it("call: one error line with the cause", async () => {
    const r = await run(["call", dir, "read_file", "--args", '{"path": "x"}']);
    assertOneLine(r, 1, new RegExp(`^error: read_file is not available: ${CAUSE.source}$`), "call");
    quiet(r.stderr, "call");
  });
});
