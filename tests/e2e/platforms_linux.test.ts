/**
 * Every Linux binary this machine can run, each where it is promised to run, answering
 * `--version`, `check` (with its live start) and a `serve` round trip over stdio (initialize,
 * tools/list, a command-tool call) driven with raw JSON-RPC lines:
 *  - linux-x64 (dist/hermit) in an otherwise empty root file system holding only the glibc files
 *    it links — the README's list, checked here against `ldd`;
 *  - linux-x64-musl in a musl root file system (Debian's musl, plus the C++ runtime Bun's musl
 *    builds link, see `fixtures/musl/gcompat.c`), with no glibc anywhere;
 *  - linux-arm64 under qemu-user (`qemu-aarch64 -L` Debian's arm64 glibc from libc6-arm64-cross);
 *    hermit re-executes itself through a qemu wrapper named by HERMIT_SELF, no binfmt needed.
 * Root file systems are entered with unshare (see helpers/rootfs.ts). Missing tools skip a suite
 * with a note, and fail it under CI (.ci/run installs them).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fixtures, hermitBin, root, runCommand } from "../helpers/hermit.ts";
import {
  callText,
  findTool,
  glibcLibs,
  isRoot,
  mcpInput,
  requirements,
  responses,
  Rootfs,
} from "../helpers/rootfs.ts";
import { buildTarget } from "../helpers/targets.ts";
import { tempDir } from "../helpers/tmp.ts";

const version: string = JSON.parse(readFileSync(path.join(root, "deno.json"), "utf8")).version;

/** What the README promises the linux-x64 binary needs, and nothing more. */
const GLIBC_FILES = [
  "/lib64/ld-linux-x86-64.so.2",
  "/lib/x86_64-linux-gnu/libc.so.6",
  "/lib/x86_64-linux-gnu/libm.so.6",
  "/lib/x86_64-linux-gnu/libpthread.so.0",
  "/lib/x86_64-linux-gnu/libdl.so.2",
];

/** A command-tools-only adapter whose one tool runs `run` (a program that exists where it runs). */
function smokeManifest(run: string[]): string {
  return `name: smoke
version: 0.1.0
description: platform smoke test
exports:
  tools: [version]
tools:
  version:
    description: The version of the hermit that runs this tool
    input: { type: object }
    run: ${JSON.stringify(run)}
    read_only: true
    timeout: 60
`;
}

const SERVE_INPUT = mcpInput([
  { method: "tools/list" },
  { method: "tools/call", params: { name: "version", arguments: {} } },
]);

type Run = (
  args: string[],
  input?: string,
) => Promise<{ code: number | null; stdout: string; stderr: string }>;

/**
 * The three checks, the same for every binary and environment, and the sandbox: confined where
 * the kernel lets the binary confine (no warning), else one warning line and it still works.
 */
function smokeChecks(name: string, run: () => Run, adapter: () => string, sandbox: "enforced" | "warned") {
  it(`${name}: --version`, async () => {
    const r = await run()(["--version"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `hermit ${version}\n`);
  });

  it(`${name}: check, with its live start`, async () => {
    const r = await run()(["check", adapter()]);
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(
      r.stdout,
      /live: initialize answered in \d+ ms; tools\/list matches exports\.tools \(1 tool\)/,
    );
    assert.match(r.stdout, /^healthy /m);
  });

  it(`${name}: serve answers initialize, tools/list and a command-tool call over stdio`, async () => {
    const r = await run()(["serve", adapter()], SERVE_INPUT);
    assert.equal(r.code, 0, r.stderr);
    const got = responses(r.stdout);
    assert.equal((got.get(1)?.result?.serverInfo as { name: string }).name, "smoke", r.stdout);
    assert.deepEqual((got.get(2)?.result?.tools as { name: string }[]).map((t) => t.name), ["version"]);
    assert.equal(got.get(3)?.result?.isError, undefined, r.stdout);
    assert.equal(callText(got.get(3)), `hermit ${version}`);
    const warned = r.stderr.split("\n").filter((l) => /tools\.version: sandbox: not enforced here: /.test(l));
    assert.equal(warned.length, sandbox === "warned" ? 1 : 0, r.stderr);
  });
}

const shim = path.join(fixtures, "musl", "gcompat.c");
const gcc = findTool("gcc");
const unshare = findTool("unshare");
const rootNeed = {
  what: "root (for unshare --root)",
  ok: isRoot(),
  fix: "run the tests as root, as CI does",
};
const unshareNeed = { what: "unshare", ok: !!unshare, fix: "apt-get install -y util-linux" };

describe("linux-x64 in an empty root file system (glibc only)", () => {
  const req = requirements([rootNeed, unshareNeed]);
  const work = tempDir("hermit-glibc-rootfs-");
  let fs: Rootfs;
  after(() => work.cleanup());

  describe("binary", { skip: req.skip }, () => {
    before(() => {
      req.assertReady();
      fs = new Rootfs(path.join(work.path, "root"));
      fs.glibcFor(hermitBin());
      fs.copy(hermitBin(), "/hermit", 0o755);
      fs.write("/adapter/hermit.yaml", smokeManifest(["/hermit", "--version"]));
    });

    it("links exactly the glibc files the README lists", () => {
      assert.deepEqual([...glibcLibs(hermitBin())].sort(), [...GLIBC_FILES].sort());
      const readme = readFileSync(path.join(root, "README.md"), "utf8");
      for (const f of GLIBC_FILES) assert.ok(readme.includes(f), `README.md lists ${f}`);
    });

    smokeChecks(
      "linux-x64",
      () => (args, input) => fs.run(["/hermit", ...args], { input }),
      () => "/adapter",
      "enforced",
    );
  });
});

describe("linux-x64-musl in a musl root file system", () => {
  const req = requirements([
    rootNeed,
    unshareNeed,
    {
      what: "musl (/lib/ld-musl-x86_64.so.1)",
      ok: existsSync("/lib/ld-musl-x86_64.so.1"),
      fix: "apt-get install -y musl",
    },
    { what: "gcc", ok: !!gcc, fix: "apt-get install -y gcc" },
  ]);
  const work = tempDir("hermit-musl-rootfs-");
  let fs: Rootfs;
  after(() => work.cleanup());

  describe("binary", { skip: req.skip }, () => {
    before(async () => {
      req.assertReady();
      const bin = await buildTarget("linux-x64-musl", path.join(work.path, "build"));
      const so = path.join(work.path, "gcompat.so");
      execFileSync(gcc!, ["-shared", "-fPIC", "-nostdlib", "-O2", "-o", so, shim]);
      fs = new Rootfs(path.join(work.path, "root"));
      fs.musl(so);
      fs.copy(bin, "/hermit", 0o755);
      fs.write("/adapter/hermit.yaml", smokeManifest(["/hermit", "--version"]));
    });

    it("has no glibc in it: the binary's loader is musl's", () => {
      const interp = execFileSync("readelf", ["-l", fs.at("/hermit")], { encoding: "utf8" });
      assert.match(interp, /Requesting program interpreter: \/lib\/ld-musl-x86_64\.so\.1/);
      assert.ok(!existsSync(fs.at("/lib/x86_64-linux-gnu/libc.so.6")) && !existsSync(fs.at("/lib64")));
    });

    smokeChecks(
      "linux-x64-musl",
      () => (args, input) => fs.run(["/hermit", ...args], { input }),
      () => "/adapter",
      "enforced",
    );
  });
});

describe("linux-arm64 under qemu-user", () => {
  const qemu = findTool("qemu-aarch64");
  const sysroot = "/usr/aarch64-linux-gnu";
  const req = requirements([
    { what: "qemu-aarch64", ok: !!qemu, fix: "apt-get install -y qemu-user" },
    {
      what: "arm64 glibc (libc6-arm64-cross)",
      ok: existsSync(path.join(sysroot, "lib", "ld-linux-aarch64.so.1")),
      fix: "apt-get install -y libc6-arm64-cross",
    },
  ]);
  const work = tempDir("hermit-qemu-");
  let wrapper = "";
  let adapter = "";
  after(() => work.cleanup());

  describe("binary", { skip: req.skip }, () => {
    before(async () => {
      req.assertReady();
      const bin = await buildTarget("linux-arm64", path.join(work.path, "build"));
      assert.match(execFileSync("readelf", ["-h", bin], { encoding: "utf8" }), /Machine:\s+AArch64/);
      // hermit starts itself again (check → serve → watchdog): through qemu too.
      wrapper = path.join(work.path, "hermit-arm64");
      writeFileSync(wrapper, `#!/bin/sh\nexec ${qemu} -L ${sysroot} ${bin} "$@"\n`, { mode: 0o755 });
      adapter = path.join(work.path, "adapter");
      mkdirSync(adapter);
      writeFileSync(path.join(adapter, "hermit.yaml"), smokeManifest([wrapper, "--version"]));
    });

    smokeChecks(
      "linux-arm64",
      () => (args, input) =>
        runCommand(wrapper, args, {
          input,
          env: { PATH: "/usr/bin:/bin", HOME: work.path, HERMIT_SELF: wrapper },
          timeoutMs: 120_000,
        }),
      () => adapter,
      "warned", // qemu-user passes neither Landlock nor seccomp through
    );
  });
});
