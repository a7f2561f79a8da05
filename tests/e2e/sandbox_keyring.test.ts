/**
 * A confined entry cannot reach the kernel's keyrings (seccomp refuses `keyctl`, `add_key` and
 * `request_key` with ENOSYS, as on a kernel without them): before, any entry read and changed
 * the keys of the session and user keyrings it inherited, and Kerberos tickets kept in
 * `KEYRING:persistent`. A control with `sandbox: off` reaches them. Needs python3 (for the raw
 * call) and a kernel whose keyrings this process can use (a container's seccomp may refuse them
 * already: then there is nothing to show, and the test says so).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { after, before, describe, it } from "node:test";
import { runHermit } from "../helpers/hermit.ts";
import { requirements, toolNeeds } from "../helpers/requirements.ts";
import { sandboxRequirements } from "../helpers/sandbox.ts";
import { tempDir } from "../helpers/tmp.ts";

const kernel = sandboxRequirements();
const python = requirements(toolNeeds({ python3: "python3" }));

/** keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 0): the user keyring's id, or the errno's name. */
const PEEK = `
import ctypes, errno, json, platform
libc = ctypes.CDLL(None, use_errno=True)
nr = 250 if platform.machine() in ("x86_64", "AMD64") else 219
r = libc.syscall(nr, 0, -4, 0)
print(json.dumps({"keyctl": "ok" if r >= 0 else errno.errorcode.get(ctypes.get_errno(), "?")}))
`;

const here = python.skip ? undefined : spawnSync("python3", ["-c", PEEK], { encoding: "utf8" }).stdout;
const usable = here?.includes('"ok"') ?? false;

describe("the kernel's keyrings, from a confined entry", {
  skip: kernel.skip || python.skip ||
    (!usable &&
      `this process cannot use the kernel's keyrings (${here?.trim()}): nothing to keep from an entry`),
}, () => {
  const tmp = tempDir("hermit-keyring-");
  let env: Record<string, string>;

  function adapter(name: string, sandbox: string): string {
    const dir = path.join(tmp.path, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, "peek.py"), PEEK);
    writeFileSync(
      path.join(dir, "hermit.yaml"),
      [
        `name: ${name}`,
        "exports: { tools: [peek] }",
        "tools:",
        "  peek:",
        "    run: [python3, peek.py]",
        "    read_only: true",
        `    sandbox: ${sandbox}`,
      ].join("\n") + "\n",
    );
    return dir;
  }

  before(() => {
    env = {
      ...process.env as Record<string, string>,
      HOME: path.join(tmp.path, "home"),
      HERMIT_HOME: path.join(tmp.path, "state"),
    };
    mkdirSync(env.HOME);
  });
  after(() => tmp.cleanup());

  for (
    const [what, sandbox] of [["a tool with network", "{}"], [
      "a tool with network: none",
      "{ network: none }",
    ]]
  ) {
    it(`${what}: keyctl is refused (ENOSYS)`, async () => {
      const r = await runHermit(["call", adapter(what.replace(/\W+/g, "-"), sandbox), "peek"], {
        env,
        cwd: tmp.path,
        timeoutMs: 60_000,
      });
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.deepEqual(JSON.parse(r.stdout), { keyctl: "ENOSYS" }, r.stderr);
    });
  }

  it("control: with sandbox: off keyctl answers", async () => {
    const r = await runHermit(["call", adapter("control", "off"), "peek"], {
      env,
      cwd: tmp.path,
      timeoutMs: 60_000,
    });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { keyctl: "ok" });
  });
});
