/**
 * The static half of `hermit check`, over small adapters built in temp directories: a healthy one
 * has no problems, and each kind of mistake gives the finding (level, area, location) a person
 * needs to fix it.
 */
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { after, describe, it } from "node:test";
import { buildReport, renderReport } from "../../../src/check/report.ts";
import { type Finding, staticFindings } from "../../../src/check/static.ts";
import { loadManifestWithSource } from "../../../src/manifest/load.ts";
import { tempDir } from "../../helpers/tmp.ts";

const tmp = tempDir();
after(() => tmp.cleanup());
let n = 0;

const HELLO = "#!/bin/sh\necho hello\n";
const SKILL = "---\nname: greet\ndescription: Greets people\n---\nSay hello.\n";
const ROLE = "---\nname: helper\ndescription: Helps\n---\nYou help.\n";

/** Write an adapter; `exec` lists files to mark executable. Returns its directory. */
function adapter(files: Record<string, string>, exec: string[] = []): string {
  const dir = path.join(tmp.path, `a${n++}`);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text);
  }
  for (const rel of exec) chmodSync(path.join(dir, rel), 0o755);
  return dir;
}

const env = (extra: Record<string, string> = {}) => ({ PATH: process.env.PATH, ...extra });

function check(dir: string, extra: Record<string, string> = {}): Finding[] {
  return staticFindings(loadManifestWithSource(dir), env(extra));
}

const problems = (f: Finding[]) => f.filter((x) => x.level === "problem");
const warnings = (f: Finding[]) => f.filter((x) => x.level === "warning");
/** The one finding of `level` whose message matches; fails listing all findings otherwise. */
function one(f: Finding[], level: Finding["level"], message: RegExp): Finding {
  const hits = f.filter((x) => x.level === level && message.test(x.message));
  assert.equal(hits.length, 1, `one ${level} matching ${message} in:\n${JSON.stringify(f, null, 2)}`);
  return hits[0];
}
const lineCol = (x: Finding) => /:(\d+:\d+)$/.exec(x.at ?? "")?.[1];

const healthyYaml = `name: healthy
version: 1.0.0
exports:
  tools: [hello]
  context: CONTEXT.md
  skills: skills/
  roles: roles/
tools:
  hello:
    description: Say hello
    run: [sh, tools/hello.sh]
`;
const healthyFiles = {
  "hermit.yaml": healthyYaml,
  "CONTEXT.md": "# healthy\n",
  "skills/greet/SKILL.md": SKILL,
  "roles/helper.md": ROLE,
  "tools/hello.sh": HELLO,
};

describe("a healthy adapter", () => {
  it("has no problems and no warnings, and says what it checked", () => {
    const f = check(adapter(healthyFiles, ["tools/hello.sh"]));
    assert.deepEqual(problems(f), []);
    assert.deepEqual(warnings(f), []);
    const ok = f.filter((x) => x.level === "ok").map((x) => x.area);
    for (const area of ["manifest", "exports", "context", "skills", "roles"]) {
      assert.ok(ok.includes(area), area);
    }
    one(f, "ok", /^1 tool exported \(1 command, 0 from upstream servers\)$/);
    one(f, "ok", /^1 skill in skills\/$/);
  });

  it("reads as healthy (exit 0) in the report", () => {
    const loaded = loadManifestWithSource(adapter(healthyFiles, ["tools/hello.sh"]));
    const report = buildReport(loaded.manifest, staticFindings(loaded, env()));
    assert.equal(report.verdict, "healthy");
    assert.equal(report.problems, 0);
    assert.equal(report.adapter, "healthy");
    assert.equal(report.version, "1.0.0");
    const text = renderReport(report);
    assert.match(text, /^hermit check: healthy 1\.0\.0\n/);
    assert.match(text, /healthy \(0 problems, 0 warnings\)\n$/);
  });
});

describe("exports", () => {
  it("an export nothing provides is a problem pointing at the name", () => {
    const yaml = healthyYaml.replace("tools: [hello]", "tools: [hello, ghost]");
    const f = check(adapter({ ...healthyFiles, "hermit.yaml": yaml }, ["tools/hello.sh"]));
    const p = one(f, "problem", /exports\.tools lists 'ghost', but no command tool defines it/);
    assert.equal(p.area, "exports");
    assert.match(p.at!, /hermit\.yaml:4:18$/);
    assert.match(p.message, /add tools\.ghost or an upstream that includes it/);
    assert.equal(problems(f).length, 1);
  });

  it("a misspelt export of a defined tool or an upstream's include: did you mean", () => {
    const yaml = healthyYaml.replace("tools: [hello]", "tools: [helo, read_graf]") +
      "mcp_servers:\n  memory:\n    command: node\n    tools: { include: [read_graph] }\n";
    const f = check(adapter({ ...healthyFiles, "hermit.yaml": yaml }, ["tools/hello.sh"]));
    one(
      f,
      "problem",
      /^exports\.tools lists 'helo', but no command tool defines it .*; did you mean 'hello'\?$/,
    );
    one(f, "problem", /^exports\.tools lists 'read_graf', but .*; did you mean 'read_graph'\?$/);
  });

  it("an export named like an Object.prototype member is not provided by accident", () => {
    const yaml = healthyYaml.replace("tools: [hello]", "tools: [hello, constructor]");
    const f = check(adapter({ ...healthyFiles, "hermit.yaml": yaml }, ["tools/hello.sh"]));
    one(f, "problem", /exports\.tools lists 'constructor', but no command tool defines it/);
  });

  it("a command tool not exported is a warning at its key", () => {
    const yaml = healthyYaml + "  unused:\n    run: [sh, tools/hello.sh]\n";
    const f = check(adapter({ ...healthyFiles, "hermit.yaml": yaml }, ["tools/hello.sh"]));
    const w = one(f, "warning", /^tools\.unused is defined but not in exports\.tools, so it is not served$/);
    assert.equal(lineCol(w), "12:3");
    assert.deepEqual(problems(f), []);
  });

  it("an empty exports.tools is a warning", () => {
    const f = check(adapter({ "hermit.yaml": "name: empty\nexports:\n  tools: []\n" }));
    one(f, "warning", /^no tools exported, so hosts get no tools .*exports: \{ tools: \[…\] \}$/);
  });

  it("an export two sources certainly provide is a problem", () => {
    const yaml = healthyYaml + "mcp_servers:\n  up:\n    command: sh\n    tools: { include: [hello] }\n";
    const f = check(adapter({ ...healthyFiles, "hermit.yaml": yaml }, ["tools/hello.sh"]));
    one(
      f,
      "problem",
      /'hello' is provided by more than one source \(a command tool, mcp_servers\.up\); rename one/,
    );
  });

  it("an upstream include that is not exported, and a disabled upstream, are warnings", () => {
    const yaml = healthyYaml +
      "mcp_servers:\n  up:\n    command: sh\n    enabled: false\n    tools: { include: [read_file, 'x*'] }\n";
    const f = check(adapter({ ...healthyFiles, "hermit.yaml": yaml }, ["tools/hello.sh"]));
    one(f, "warning", /mcp_servers\.up includes 'read_file', but exports\.tools does not list 'read_file'/);
    const d = one(f, "warning", /mcp_servers\.up is disabled \(enabled: false\)/);
    assert.equal(lineCol(d), "15:14");
  });
});

describe("command tools", () => {
  it("a relative run program that does not exist is a problem", () => {
    const yaml = healthyYaml.replace("run: [sh, tools/hello.sh]", "run: [./tools/missing]");
    const f = check(adapter({ ...healthyFiles, "hermit.yaml": yaml }));
    const p = one(
      f,
      "problem",
      /^tools\.hello\.run: '\.\/tools\/missing' does not exist \(relative to the adapter\)$/,
    );
    assert.equal(lineCol(p), "11:11");
  });

  it("a relative run program that is not executable says chmod +x", () => {
    const yaml = healthyYaml.replace("run: [sh, tools/hello.sh]", "run: [tools/hello.sh]");
    const f = check(adapter({ ...healthyFiles, "hermit.yaml": yaml }));
    one(f, "problem", /^tools\.hello\.run: 'tools\/hello\.sh' is not executable; chmod \+x it/);
  });

  it("a program not on PATH is a warning, not a problem", () => {
    const yaml = healthyYaml.replace(
      "run: [sh, tools/hello.sh]",
      "run: [no-such-program-hermit, tools/hello.sh]",
    );
    const f = check(adapter({ ...healthyFiles, "hermit.yaml": yaml }));
    one(f, "warning", /'no-such-program-hermit' is not on this PATH/);
    assert.deepEqual(problems(f), []);
  });

  it("a missing script argument is a problem pointing at that argument", () => {
    const yaml = healthyYaml.replace("run: [sh, tools/hello.sh]", "run: [sh, -e, tools/gone.sh]");
    const f = check(adapter({ ...healthyFiles, "hermit.yaml": yaml }));
    const p = one(
      f,
      "problem",
      /^tools\.hello\.run: script 'tools\/gone\.sh' does not exist in the adapter$/,
    );
    assert.equal(lineCol(p), "11:19");
  });

  it("a cwd that is not a directory is a problem", () => {
    const yaml = healthyYaml + "    cwd: nowhere\n";
    const f = check(adapter({ ...healthyFiles, "hermit.yaml": yaml }));
    const p = one(f, "problem", /^tools\.hello\.cwd 'nowhere' is not a directory in the adapter$/);
    assert.equal(lineCol(p), "12:10");
  });
});

describe("environment", () => {
  it("an unresolved ${VAR} is a warning at the field that uses it; set ones and context variables are not", () => {
    const yaml = healthyYaml + [
      "mcp_servers:",
      "  fs:",
      "    command: sh",
      '    args: [-c, "${HERMIT_TEST_UNSET}", "${workspaceFolder}", "${HERMIT_TEST_SET}"]',
      "    headers: { X: '${env:HERMIT_TEST_UNSET2}' }",
      "  hello2:",
      "    url: https://example.com/mcp",
      "",
    ].join("\n");
    const f = check(adapter({ ...healthyFiles, "hermit.yaml": yaml }, ["tools/hello.sh"]), {
      HERMIT_TEST_SET: "1",
    });
    const a = one(
      f,
      "warning",
      /^mcp_servers\.fs\.args\[1\] uses \$\{HERMIT_TEST_UNSET\}, which is not set here/,
    );
    assert.equal(lineCol(a), "15:16");
    const h = one(f, "warning", /^mcp_servers\.fs\.headers\.X uses \$\{env:HERMIT_TEST_UNSET2\}/);
    assert.equal(lineCol(h), "16:19");
    assert.equal(warnings(f).filter((w) => w.area === "env").length, 2);
  });

  it("a command tool's env references are checked too", () => {
    const yaml = healthyYaml + "    env: { KEY: '${HERMIT_TEST_NOPE}' }\n";
    const f = check(adapter({ ...healthyFiles, "hermit.yaml": yaml }, ["tools/hello.sh"]));
    const w = one(f, "warning", /^tools\.hello\.env\.KEY uses \$\{HERMIT_TEST_NOPE\}/);
    assert.equal(lineCol(w), "12:17");
  });

  it("HERMIT_SAFE_MODE=1 (or true, yes, on, as the gate reads it) is a warning that nothing will load", () => {
    for (const value of ["1", "true", "YES", "on"]) {
      const f = check(adapter(healthyFiles, ["tools/hello.sh"]), { HERMIT_SAFE_MODE: value });
      const w = one(
        f,
        "warning",
        /HERMIT_SAFE_MODE is set: no upstream server and no command tool is loaded/,
      );
      assert.equal(w.area, "safe-mode");
    }
    assert.equal(
      warnings(check(adapter(healthyFiles, ["tools/hello.sh"]), { HERMIT_SAFE_MODE: "0" })).length,
      0,
    );
  });
});

describe("context, skills and roles", () => {
  it("a missing context file is a problem at exports.context", () => {
    const { "CONTEXT.md": _, ...rest } = healthyFiles;
    const p = one(
      check(adapter(rest, ["tools/hello.sh"])),
      "problem",
      /exports\.context 'CONTEXT\.md' does not exist/,
    );
    assert.equal(lineCol(p), "5:12");
  });

  it("a skills folder that is missing is a problem", () => {
    const { "skills/greet/SKILL.md": _, ...rest } = healthyFiles;
    one(check(adapter(rest, ["tools/hello.sh"])), "problem", /exports\.skills 'skills\/' is not a directory/);
  });

  it("a skill without a description, or without front matter, is a warning naming the file", () => {
    const f = check(adapter({
      ...healthyFiles,
      "skills/nodesc/SKILL.md": "---\nname: nodesc\n---\nbody\n",
      "skills/blankdesc/SKILL.md": "---\nname: blankdesc\ndescription: '  '\n---\n",
      "skills/plain/SKILL.md": "# just markdown\n",
      "skills/badyaml/SKILL.md": "---\nname: [unclosed\n---\n",
    }, ["tools/hello.sh"]));
    one(f, "warning", /^skills\/nodesc\/SKILL\.md: front matter has no description$/);
    one(f, "warning", /^skills\/blankdesc\/SKILL\.md: front matter has no description$/);
    one(f, "warning", /^skills\/plain\/SKILL\.md: has no front matter; start the file with ---/);
    one(f, "warning", /^skills\/badyaml\/SKILL\.md: front matter is not valid YAML/);
    one(f, "ok", /^5 skills in skills\/$/);
    assert.deepEqual(problems(f), []);
  });

  it("a skill name hosts do not take, or one that is not its folder's, is a warning naming the file", () => {
    const f = check(adapter({
      ...healthyFiles,
      "skills/bad name/SKILL.md": "---\nname: bad name\ndescription: d\n---\n",
      "skills/Upper/SKILL.md": "---\nname: Upper\ndescription: d\n---\n",
      "skills/folder/SKILL.md": "---\nname: other\ndescription: d\n---\n",
    }, ["tools/hello.sh"]));
    one(
      f,
      "warning",
      /^skills\/bad name\/SKILL\.md: name 'bad name' is not a skill name \(lowercase letters/,
    );
    one(f, "warning", /^skills\/Upper\/SKILL\.md: name 'Upper' is not a skill name/);
    one(f, "warning", /^skills\/folder\/SKILL\.md: name 'other' differs from its folder 'folder'/);
    assert.deepEqual(problems(f), []);
  });

  it("a role whose name no host can use as a file name is a warning (deploy leaves it out)", () => {
    const f = check(adapter({
      ...healthyFiles,
      "roles/escape.md": "---\nname: ../../x\ndescription: d\n---\nbody\n",
    }, ["tools/hello.sh"]));
    one(
      f,
      "warning",
      /^roles\/escape\.md: name '\.\.\/\.\.\/x' is not usable as a file name \(letters, digits, \., _ and -\); deploy leaves it out$/,
    );
  });

  it("odd entries in skills/ and roles/ do not crash the check", () => {
    const dir = adapter({ ...healthyFiles, "skills/notes.txt": "x", "roles/README.txt": "x" }, [
      "tools/hello.sh",
    ]);
    mkdirSync(path.join(dir, "skills", "dirskill", "SKILL.md"), { recursive: true });
    symlinkSync(path.join(dir, "gone.md"), path.join(dir, "roles", "dangling.md"));
    mkdirSync(path.join(dir, "roles", "folder.md"));
    const f = check(dir);
    one(f, "ok", /^1 skill in skills\/$/);
    one(f, "ok", /^1 role in roles\/$/);
    assert.deepEqual(problems(f), []);
  });

  it("a path or symbolic link leading out of the adapter is a problem naming it and its target", () => {
    const secret = path.join(tmp.path, "secret.txt");
    writeFileSync(secret, "key\n");
    const dir = adapter(healthyFiles, ["tools/hello.sh"]);
    symlinkSync(secret, path.join(dir, "skills", "greet", "leak"));
    symlinkSync(path.join(dir, "CONTEXT.md"), path.join(dir, "skills", "greet", "inside.md"));
    const f = check(dir);
    one(f, "problem", /^skills\/greet\/leak leads to \S*secret\.txt, outside the adapter /);
    assert.equal(problems(f).length, 1, "a link that stays inside the adapter is fine");

    const outsideRoles = path.join(tmp.path, "elsewhere-roles");
    mkdirSync(outsideRoles, { recursive: true });
    writeFileSync(path.join(outsideRoles, "spy.md"), ROLE);
    const yaml = healthyYaml.replace("context: CONTEXT.md", "context: LINKED.md")
      .replace("roles: roles/", "roles: linked-roles/");
    const linked = adapter({ ...healthyFiles, "hermit.yaml": yaml }, ["tools/hello.sh"]);
    symlinkSync(secret, path.join(linked, "LINKED.md"));
    symlinkSync(outsideRoles, path.join(linked, "linked-roles"));
    const g = check(linked);
    assert.equal(lineCol(one(g, "problem", /^exports\.context LINKED\.md leads to \S*secret\.txt/)), "5:12");
    one(g, "problem", /^exports\.roles linked-roles\/ leads to \S*elsewhere-roles, outside the adapter/);
  });

  it("a role without a name is a warning", () => {
    const f = check(
      adapter({ ...healthyFiles, "roles/anon.md": "---\ndescription: x\n---\n" }, ["tools/hello.sh"]),
    );
    one(f, "warning", /^roles\/anon\.md: front matter has no name$/);
  });
});

describe("serve.command", () => {
  const withCommand = (command: string) => healthyYaml + `serve:\n  command: ${command}\n`;

  it("a DIR where there is no adapter (written as from the project) is a problem at the field", () => {
    const dir = adapter({ ...healthyFiles, "hermit.yaml": withCommand("hermit serve my-tools") }, [
      "tools/hello.sh",
    ]);
    const p = one(
      problems(check(dir)),
      "problem",
      /^serve\.command 'hermit serve my-tools' serves \S+my-tools, where there is no hermit\.yaml, so a host started with it fails; its DIR is relative to the adapter: command: hermit serve \.$/,
    );
    assert.equal(lineCol(p), "13:12");
  });

  it("the adapter itself, its manifest, or another adapter's directory is fine", () => {
    for (
      const command of ["hermit serve", "hermit serve .", "hermit serve ./hermit.yaml", "hermit serve sub"]
    ) {
      const dir = adapter(
        { ...healthyFiles, "hermit.yaml": withCommand(command), "sub/hermit.yaml": "name: sub\n" },
        ["tools/hello.sh"],
      );
      assert.deepEqual(problems(check(dir)), [], command);
    }
  });
});

describe("standalone adapters", () => {
  const standalone = (extra: string) => healthyYaml + "serve:\n  lifecycle: standalone\n" + extra;

  it("without serve.instructions is a problem at serve", () => {
    const f = check(adapter({ ...healthyFiles, "hermit.yaml": standalone("") }, ["tools/hello.sh"]));
    const p = one(f, "problem", /^serve\.instructions is required for a standalone adapter/);
    assert.equal(lineCol(p), "13:3");
  });

  it("with an instructions file that does not exist is a problem at the field", () => {
    const yaml = standalone("  instructions: SERVICE.md\n");
    const f = check(adapter({ ...healthyFiles, "hermit.yaml": yaml }, ["tools/hello.sh"]));
    const p = one(f, "problem", /^serve\.instructions 'SERVICE\.md' does not exist in the adapter$/);
    assert.equal(lineCol(p), "14:17");
  });

  it("with its instructions file is healthy", () => {
    const yaml = standalone("  instructions: SERVICE.md\n");
    const f = check(
      adapter({ ...healthyFiles, "hermit.yaml": yaml, "SERVICE.md": "run it\n" }, ["tools/hello.sh"]),
    );
    assert.deepEqual(problems(f), []);
    one(f, "ok", /standalone service, instructions in SERVICE\.md/);
  });

  it("a session adapter needs no instructions", () => {
    assert.deepEqual(problems(check(adapter(healthyFiles, ["tools/hello.sh"]))), []);
  });
});

describe("name budget", () => {
  // mcp__a__<tool> is 8 characters plus the tool's.
  const withTool = (tool: string) =>
    check(adapter({
      "hermit.yaml": `name: a\nexports:\n  tools: [${tool}]\ntools:\n  ${tool}:\n    run: [sh]\n`,
    }));
  const names = (f: Finding[]) => warnings(f).filter((w) => w.area === "names");

  it("60 characters is within every budget", () => {
    assert.deepEqual(names(withTool("t".repeat(52))), []);
  });

  it("61 to 64 characters: Cursor's 60 is passed", () => {
    for (const len of [53, 56]) {
      const [w] = names(withTool("t".repeat(len)));
      assert.match(
        w.message,
        new RegExp(
          `^mcp__a__t{${len}} is ${
            len + 8
          } characters; Cursor caps tool names at 60: shorten the adapter or tool name$`,
        ),
      );
      assert.equal(lineCol(w), "3:11");
    }
  });

  it("65 characters and more: the 64 most hosts allow is passed", () => {
    const f = names(withTool("t".repeat(57)));
    assert.equal(f.length, 1);
    assert.match(f[0].message, /is 65 characters; Claude Code, Codex and others cap tool names at 64/);
  });

  it("two exports that become one host name are a warning", () => {
    const f = check(adapter({
      "hermit.yaml":
        "name: a\nexports:\n  tools: [read-file, read_file]\ntools:\n  read-file:\n    run: [sh]\n" +
        "  read_file:\n    run: [sh]\n",
    }));
    const w = one(f, "warning", /'read_file' and 'read-file' both become mcp__a__read_file in hosts/);
    assert.equal(lineCol(w), "3:22");
  });
});
