/**
 * Where the sandbox cannot be had, on the real kernel: hermit runs under a seccomp filter
 * (tests/fixtures/sandbox/oldkernel.c) that makes it look like a kernel without Landlock whose
 * user namespaces are restricted. Then each entry warns once, in one line, what is not enforced,
 * and still works (its network cut by seccomp instead of a namespace); `HERMIT_SANDBOX=require`
 * and `sandbox: { require: true }` refuse instead (`refused: …`, exit 4 from `call` and `check`).
 * Also: a confined server that fails to start is told which key would open what it needed.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { after, before, describe, it } from "node:test";
import {
  fixtures,
  type Flavor,
  hermitArgv,
  hermitEnv,
  root,
  runCommand,
  runHermit,
} from "../helpers/hermit.ts";
import { findTool, requirements } from "../helpers/rootfs.ts";
import { sandboxRequirements } from "../helpers/sandbox.ts";
import { tempDir } from "../helpers/tmp.ts";

const cc = findTool("cc");
const ready = requirements([{ what: "a C compiler (cc)", ok: !!cc, fix: "apt-get install -y gcc" }]);
const kernel = sandboxRequirements();
const FLAVORS: Flavor[] = ["bin", "deno"];

describe("no Landlock, no user namespaces: warn, or refuse when required", { skip: ready.skip }, () => {
  const tmp = tempDir("hermit-sandbox-old-");
  let oldkernel: string;
  let dir: string;
  let env: Record<string, string>;

  before(() => {
    ready.assertReady();
    oldkernel = path.join(tmp.path, "oldkernel");
    execFileSync(cc!, ["-O2", "-o", oldkernel, path.join(fixtures, "sandbox", "oldkernel.c")]);
    dir = path.join(tmp.path, "adapter");
    mkdirSync(dir);
    writeFileSync(
      path.join(dir, "hermit.yaml"),
      [
        "name: old",
        "exports: { tools: [hello, echo] }",
        "tools:",
        "  hello:",
        `    run: [node, -e, "process.stdout.write('hello from ' + process.pid)"]`,
        "    sandbox: { network: none }",
        "mcp_servers:",
        "  ev:",
        "    command: node",
        `    args: [${JSON.stringify(everything())}]`,
        "    trust: untrusted",
        "    read_only_tools: [echo]",
        "    tools: { include: [echo] }",
      ].join("\n") + "\n",
    );
    env = { ...process.env as Record<string, string>, HOME: path.join(tmp.path, "home") };
    mkdirSync(env.HOME);
  });
  after(() => tmp.cleanup());

  /** hermit, run on the "old kernel". */
  const old = (flavor: Flavor, args: string[], extra: Record<string, string> = {}) => {
    const [cmd, ...pre] = hermitArgv(flavor);
    return runCommand(oldkernel, [cmd, ...pre, ...args], {
      cwd: tmp.path,
      env: hermitEnv({ ...env, ...extra }),
      timeoutMs: 90_000,
    });
  };

  for (const flavor of FLAVORS) {
    it(`${flavor}: each entry warns once, in one line, and still runs`, async () => {
      const tool = await old(flavor, ["call", dir, "hello"]);
      assert.equal(tool.code, 0, tool.stderr);
      assert.match(tool.stdout, /^hello from \d+\n$/);
      const warnings = tool.stderr.split("\n").filter((l) => l.includes("sandbox: not enforced here"));
      // call starts the upstreams too: one line for each entry that ran
      const why = "files are not confined (no Landlock (the kernel has none); it needs Linux 5.13 or later)";
      assert.deepEqual(warnings.sort(), [
        `hermit: warn: mcp_servers.ev: sandbox: not enforced here: ${why}`,
        `hermit: warn: tools.hello: sandbox: not enforced here: ${why}`,
      ]);
      const up = await old(flavor, ["call", dir, "echo", "--args", '{"message":"still works"}']);
      assert.equal(up.code, 0, up.stderr);
      assert.equal(up.stdout.trim(), "Echo: still works");
      assert.equal(
        up.stderr.split("\n").filter((l) => l.includes("mcp_servers.ev: sandbox: not enforced")).length,
        1,
      );
    });

    it(`${flavor}: tools shows what is enforced instead (seccomp for the network)`, async () => {
      const r = await old(flavor, ["tools", dir]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stdout,
        /sandbox: mcp_servers\.ev: fs: not enforced; network: none \(seccomp\); not enforced here: files/,
      );
      assert.match(r.stdout, /sandbox: tools\.hello: fs: not enforced; network: none \(seccomp\)/);
      const json = JSON.parse((await old(flavor, ["tools", dir, "--json"])).stdout);
      assert.deepEqual(json.sandbox.map((c: { where: string }) => c.where), [
        "mcp_servers.ev",
        "tools.hello",
      ]);
      assert.match(json.sandbox[0].missing[0], /^files are not confined/);
      assert.equal(
        json.tools.find((t: { name: string }) => t.name === "echo").sandbox,
        json.sandbox[0].summary,
      );
    });

    it(`${flavor}: HERMIT_SANDBOX=require refuses: exit 4, and nothing runs`, async () => {
      const tool = await old(flavor, ["call", dir, "hello"], { HERMIT_SANDBOX: "require" });
      assert.equal(tool.code, 4, tool.stdout + tool.stderr);
      assert.doesNotMatch(tool.stdout, /hello from/);
      assert.match(
        tool.stdout,
        /refused: tools\.hello: the sandbox is required \(sandbox\.require or HERMIT_SANDBOX=require\) but files are not confined .*; it was not started/,
      );
      const up = await old(flavor, ["call", dir, "echo", "--args", '{"message":"x"}'], {
        HERMIT_SANDBOX: "require",
      });
      assert.equal(up.code, 4, up.stderr);
      assert.match(up.stderr, /error: refused: mcp_servers\.ev: the sandbox is required/);
    });
  }

  it("sandbox: { require: true } in the manifest: check exits 4 with the refusal", async () => {
    const strict = path.join(tmp.path, "strict");
    mkdirSync(strict);
    writeFileSync(
      path.join(strict, "hermit.yaml"),
      `name: strict\nexports: { tools: [hello] }\nsandbox: { require: true }\ntools:\n  hello: { run: [node, -e, "1"] }\n`,
    );
    const r = await old("bin", ["check", strict]);
    assert.equal(r.code, 4, r.stdout + r.stderr);
    assert.match(
      r.stdout,
      /problem {2}refused: tools\.hello: the sandbox is required .* but files are not confined/,
    );
  });
});

describe(
  "a confined server that fails to start is told which key would open it",
  { skip: kernel.skip },
  () => {
    const tmp = tempDir("hermit-sandbox-hint-");
    after(() => tmp.cleanup());

    it("an EACCES on a path names the write: key to add", async () => {
      kernel.assertReady();
      const dir = path.join(tmp.path, "adapter");
      const wanted = path.join(tmp.path, "data", "store");
      mkdirSync(dir);
      writeFileSync(
        path.join(dir, "hermit.yaml"),
        [
          "name: hint",
          "exports: { tools: [x] }",
          "mcp_servers:",
          "  needy:",
          "    command: node",
          `    args: [-e, "require('fs').mkdirSync(${
            JSON.stringify(wanted).replaceAll('"', "'")
          }, { recursive: true })"]`,
          "    trust: untrusted",
        ].join("\n") + "\n",
      );
      const r = await runHermit(["check", dir], { cwd: tmp.path, timeoutMs: 90_000 });
      assert.equal(r.code, 3, r.stdout + r.stderr);
      assert.match(
        r.stdout,
        new RegExp(
          `mcp_servers\\.needy could not be started: the server exited: .*; it runs in the sandbox \\(fs: landlock abi \\d+; network: none \\(namespace\\)\\); if it needs more, add "${
            path.join(tmp.path, "data").replaceAll("/", "\\/")
          }(\\/store)?" to mcp_servers\\.needy\\.sandbox\\.write`,
        ),
      );
    });
  },
);

function everything(): string {
  return path.join(root, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
}
