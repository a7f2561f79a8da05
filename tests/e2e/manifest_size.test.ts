/**
 * Size caps on what hermit parses from an adapter (issue 12 item 23): a 100 MB manifest, or one
 * that is a link to an endless device, is a one-line usage error (exit 2) found without reading it,
 * under an address-space limit a full read would break; context, skill and role files have their
 * own cap. The real binary, real files (sparse, so nothing big is written to disk).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { after, describe, it } from "node:test";
import { readTextCapped } from "../../src/platform/read_capped.ts";
import { hermitBin, hermitEnv, runCommand, runHermit } from "../helpers/hermit.ts";
import { tempDir } from "../helpers/tmp.ts";

const posix = process.platform !== "win32";
const MANIFEST = "name: big\nexports: { tools: [] }\n";

/** `hermit ARGS` with at most ~1.5 GB of address space (a 100 MB YAML parse needs GBs). */
function hermitLimited(args: string[]) {
  return runCommand("bash", ["-c", 'ulimit -v 1500000 && exec "$@"', "bash", hermitBin(), ...args], {
    env: hermitEnv(),
    timeoutMs: 120_000,
  });
}

describe("manifest size cap", { skip: !posix && "ulimit and /dev/zero are POSIX" }, () => {
  const tmp = tempDir("hermit-size-");
  after(() => tmp.cleanup());

  it("a 100 MB manifest is one line naming the file, its size and the limit, exit 2", async () => {
    const dir = path.join(tmp.path, "big");
    mkdirSync(dir);
    const file = path.join(dir, "hermit.yaml");
    writeFileSync(file, MANIFEST);
    truncateSync(file, 100 * 1024 * 1024);
    for (const cmd of [["check", "--static", dir], ["tools", dir], ["serve", dir]]) {
      const r = await hermitLimited(cmd);
      assert.equal(r.code, 2, `${cmd[0]}: ${r.stderr}`);
      assert.equal(
        r.stderr,
        `error: ${file}: too large (104857600 bytes); a manifest may be at most 1 MiB: keep data out of hermit.yaml\n`,
      );
      assert.equal(r.stdout, "");
    }
  });

  it("a manifest that is a link to /dev/zero is refused after reading at most the limit", async () => {
    const dir = path.join(tmp.path, "zero");
    mkdirSync(dir);
    symlinkSync("/dev/zero", path.join(dir, "hermit.yaml"));
    const r = await hermitLimited(["check", "--static", dir]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /^error: .*hermit\.yaml: too large \(more than that\); a manifest may be at most 1 MiB/,
    );
    assert.equal(r.stderr.split("\n").length, 2, "one line");
  });

  it("a manifest that is a FIFO is refused at once, not waited on", async () => {
    const dir = path.join(tmp.path, "fifo");
    mkdirSync(dir);
    const made = spawnSync("mkfifo", [path.join(dir, "hermit.yaml")]);
    assert.equal(made.status, 0, "mkfifo");
    for (const cmd of [["check", "--static", dir], ["serve", dir], ["tools", dir]]) {
      const r = await runHermit(cmd, { timeoutMs: 20_000 });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /^error: .*hermit\.yaml: not a regular file \(a FIFO\)/);
      assert.equal(r.stderr.split("\n").length, 2, "one line");
    }
  });

  it("a manifest that is not UTF-8 is refused naming the line, not read with U+FFFD in it", async () => {
    const dir = path.join(tmp.path, "latin1");
    mkdirSync(dir);
    writeFileSync(
      path.join(dir, "hermit.yaml"),
      Buffer.concat([
        Buffer.from("name: latin\nexports: { tools: [] }\n# caf"),
        Buffer.from([0xe9]),
        Buffer.from("\n"),
      ]),
    );
    const r = await runHermit(["check", "--static", dir]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^error: .*hermit\.yaml: not UTF-8 text \(line 3\); save it as UTF-8/);
  });

  it("a manifest of exactly 1 MiB still loads", async () => {
    const dir = path.join(tmp.path, "edge");
    mkdirSync(dir);
    const text = MANIFEST + "#".repeat(1024 * 1024 - MANIFEST.length - 1) + "\n";
    assert.equal(Buffer.byteLength(text), 1024 * 1024);
    writeFileSync(path.join(dir, "hermit.yaml"), text);
    const r = await runHermit(["check", "--static", dir, "--json"]);
    assert.notEqual(r.code, 2, r.stderr);
  });

  it("context, skill and role files are capped too: deploy refuses a huge context in one line", async () => {
    const dir = path.join(tmp.path, "docs");
    mkdirSync(path.join(dir, "skills", "huge"), { recursive: true });
    writeFileSync(
      path.join(dir, "hermit.yaml"),
      "name: docs\nexports: { tools: [], context: CONTEXT.md, skills: skills/ }\n",
    );
    writeFileSync(path.join(dir, "CONTEXT.md"), "");
    truncateSync(path.join(dir, "CONTEXT.md"), 50 * 1024 * 1024);
    writeFileSync(path.join(dir, "skills", "huge", "SKILL.md"), "---\nname: huge\ndescription: d\n---\n");
    truncateSync(path.join(dir, "skills", "huge", "SKILL.md"), 50 * 1024 * 1024);
    const check = await hermitLimited(["check", "--static", dir]);
    assert.match(
      check.stdout + check.stderr,
      /skills\/huge\/SKILL\.md: is too large \(52428800 bytes; at most 1 MiB\)/,
    );
    const project = path.join(tmp.path, "project");
    mkdirSync(project);
    const deploy = await hermitLimited(["deploy", dir, project, "--host", "claude"]);
    assert.equal(deploy.code, 2, deploy.stderr);
    assert.equal(
      deploy.stderr,
      `error: exports.context names CONTEXT.md, which is too large (52428800 bytes; at most 1 MiB); check ${dir}\n`,
    );
  });
});

describe("readTextCapped", { skip: !posix && "/dev/zero is POSIX" }, () => {
  it("reads up to the limit, refuses one byte more, and stops an endless file at the limit", () => {
    const tmp = tempDir("hermit-size-");
    try {
      const file = path.join(tmp.path, "f");
      writeFileSync(file, "x".repeat(1000));
      assert.equal(readTextCapped(file, 1000).length, 1000);
      assert.throws(() => readTextCapped(file, 999), /is 1000 bytes, over the limit of 999 bytes/);
      assert.throws(() => readTextCapped("/dev/zero", 4096), /larger than the limit of 4096 bytes/);
      assert.throws(() => readTextCapped(path.join(tmp.path, "missing"), 10), { code: "ENOENT" });
    } finally {
      tmp.cleanup();
    }
  });
});
