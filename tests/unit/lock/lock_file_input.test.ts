/**
 * What reading hermit.lock takes as input. A package entry is one exact version of a registry
 * package for its runner (the version is spliced into the spawned spec, and the lock's hashes do
 * not cover it): a URL, git, path or alias spec, a range or a tag makes the lock invalid. And the
 * file itself: a FIFO, a link to a device or to stdin, or one past the size cap is an invalid lock
 * with one line saying so, found at once (read in a child process: the old reader blocked or ate
 * memory), also by a running gateway's poll.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { closeSync, constants, existsSync, mkdirSync, openSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { describe, it } from "node:test";
import { buildLock } from "../../../src/lock/build.ts";
import { HermitError } from "../../../src/errors.ts";
import { parseLock, renderLock, writeLock } from "../../../src/lock/file.ts";
import type { Lock, Runner } from "../../../src/lock/types.ts";
import type { Upstream } from "../../../src/manifest/types.ts";
import { tempDir } from "../../helpers/tmp.ts";

/** A valid lock for one server `ev` whose package is `name@version` run by `runner`. */
function lockOf(runner: Runner, name: string, version: string): Lock {
  const lock: Lock = buildLock([{
    upstream: { name: "ev", kind: "stdio", command: "node", args: ["s.mjs"] } as Upstream,
    tools: [{ raw: "echo", exported: "echo", tool: { name: "echo", inputSchema: { type: "object" } } }],
  }]);
  lock.servers.ev.package = { runner, name, version };
  return lock;
}
const lockWith = (runner: Runner, name: string, version: string) => renderLock(lockOf(runner, name, version));
const why = (r: ReturnType<typeof parseLock>) => ("why" in r ? r.why : "");

describe("hermit.lock's package entries", () => {
  const npmVersions = {
    good: ["2026.8.31", "1.0.0-rc.1", "1.2.3+build.5", "0.0.83"],
    bad: [
      "https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz",
      "npm:other-pkg@1.0.0",
      "git+https://github.com/evil/pkg.git",
      "github:evil/pkg",
      "file:../evil",
      "^2026.1.0",
      "~1.2.3",
      ">=1.0.0",
      "1.2.3 || 2.0.0",
      "1.x",
      "2026.8",
      "latest",
      "",
      " 1.2.3",
      "1.2.3\nstdio",
    ],
  };
  for (const runner of ["npx", "bunx"] as const) {
    it(`${runner}: one exact semver version is taken; a URL, git, path, alias, range or tag is an invalid lock`, () => {
      for (const v of npmVersions.good) {
        const r = parseLock(lockWith(runner, "@modelcontextprotocol/server-everything", v));
        assert.ok("lock" in r, `${v}: ${why(r)}`);
        assert.equal(r.lock.servers.ev.package?.version, v);
      }
      for (const v of npmVersions.bad) {
        const w = why(parseLock(lockWith(runner, "@modelcontextprotocol/server-everything", v)));
        assert.ok(
          w.startsWith(`servers.ev.package.version ${JSON.stringify(v)} is not one exact version`),
          w,
        );
        assert.doesNotMatch(w, /\n/, "one line");
      }
    });
  }

  it("uvx: one exact PEP 440 version is taken; a URL, git, range, marker or tag is an invalid lock", () => {
    for (const v of ["2025.4.7", "1.0", "1.0rc1", "1.0.post1", "1.0.dev3", "1!2.0", "1.0+local.7"]) {
      const r = parseLock(lockWith("uvx", "mcp-server-fetch", v));
      assert.ok("lock" in r, `${v}: ${why(r)}`);
    }
    for (
      const v of [
        "https://files.pythonhosted.org/x.whl",
        "git+https://github.com/evil/pkg",
        ">=1.0",
        "~=1.0",
        "1.0,<2",
        "1.0; python_version>'3'",
        "1.*",
        "latest",
        "",
      ]
    ) {
      const w = why(parseLock(lockWith("uvx", "mcp-server-fetch", v)));
      assert.ok(w.startsWith(`servers.ev.package.version ${JSON.stringify(v)} is not one exact version`), w);
    }
  });

  it("the name is a registry package name for its runner (npm: @scope/name; PyPI: letters, digits, . _ -)", () => {
    for (
      const n of ["left-pad", "@modelcontextprotocol/server-everything", "@playwright/mcp", "lodash.get"]
    ) {
      const r = parseLock(lockWith("npx", n, "1.0.0"));
      assert.ok("lock" in r, `${n}: ${why(r)}`);
    }
    for (
      const n of [
        "https://registry.npmjs.org/x.tgz",
        "git+ssh://git@github.com/evil/pkg.git",
        "../evil",
        "./evil",
        "/abs/evil",
        "@scope",
        "@scope/",
        "npm:x",
        "x@1.0.0",
        "two words",
        ".hidden",
        "",
      ]
    ) {
      const w = why(parseLock(lockWith("npx", n, "1.0.0")));
      assert.ok(w.startsWith(`servers.ev.package.name ${JSON.stringify(n)} is not an npm package name`), w);
    }
    for (const n of ["mcp-server-fetch", "mcp_server.fetch", "Pkg2", "pkg[cli]", "pkg[a, b]"]) {
      const r = parseLock(lockWith("uvx", n, "1.0"));
      assert.ok("lock" in r, `${n}: ${why(r)}`);
    }
    for (
      const n of ["git+https://github.com/evil/pkg", "./pkg", "pkg @ https://x/y.whl", "pkg==1.0", "-pkg", ""]
    ) {
      const w = why(parseLock(lockWith("uvx", n, "1.0")));
      assert.ok(w.startsWith(`servers.ev.package.name ${JSON.stringify(n)} is not a PyPI package name`), w);
    }
  });

  it("every runner the lock records reads back; deno's names keep their npm: or jsr: scheme", () => {
    const cases: [Runner, string, string][] = [
      ["npx", "left-pad", "1.3.0"], // a lock from before recorded npm exec, pnpm dlx and yarn dlx so
      ["npm exec", "left-pad", "1.3.0"],
      ["pnpm dlx", "left-pad", "1.3.0"],
      ["yarn dlx", "left-pad", "1.3.0"],
      ["pipx run", "mcp-server-fetch", "2025.4.7"],
      ["deno", "npm:@scope/srv", "1.0.0"],
      ["deno", "srv", "1.0.0"],
      ["deno", "jsr:@std/http", "1.0.9"],
    ];
    for (const [runner, name, version] of cases) {
      const r = parseLock(lockWith(runner, name, version));
      assert.ok("lock" in r, `${runner} ${name}: ${why(r)}`);
      assert.deepEqual(r.lock.servers.ev.package, { runner, name, version });
    }
    const bad: [Runner, string, string, RegExp][] = [
      ["deno", "npm:git+https://x/y.git", "1.0.0", /name .* is not an npm package name/],
      ["deno", "npm:npm:x", "1.0.0", /is not an npm package name/],
      ["deno", "jsr:std", "1.0.0", /is not a JSR package name/],
      ["deno", "jsr:@std/http", "^1", /version "\^1" is not one exact version/],
      ["pipx run", "x", "^1", /version "\^1" is not one exact version \(PEP 440/],
    ];
    for (const [runner, name, version, want] of bad) {
      assert.match(why(parseLock(lockWith(runner, name, version))), want);
    }
    const other = lockWith("npx", "left-pad", "1.3.0").replace("runner: npx", "runner: curl");
    assert.match(why(parseLock(other)), /^servers\.ev\.package must be \{ runner: npx\|npm exec\|/);
  });

  it("a very long value is shown shortened, still on one line", () => {
    const w = why(parseLock(lockWith("npx", "left-pad", "https://x/" + "a".repeat(500))));
    assert.ok(w.length < 200, w);
    assert.match(w, /…" is not one exact version/);
  });
});

describe("writing hermit.lock", () => {
  it("a lock this hermit would refuse to read (a version that ran but is not exact) is an error, nothing written", () => {
    const tmp = tempDir();
    try {
      assert.throws(() => writeLock(tmp.path, lockOf("npx", "left-pad", "latest")), (err: Error) => {
        assert.ok(err instanceof HermitError, String(err));
        assert.equal(err.exitCode, 3);
        assert.match(
          err.message,
          /^hermit\.lock not written: servers\.ev\.package\.version "latest" is not one exact/,
        );
        return true;
      });
      assert.ok(!existsSync(path.join(tmp.path, "hermit.lock")));
      writeLock(tmp.path, lockOf("npx", "left-pad", "1.3.0"));
      assert.ok(existsSync(path.join(tmp.path, "hermit.lock")));
    } finally {
      tmp.cleanup();
    }
  });
});

/** `readLockState` (or a watching gate) run in a child of this runtime: what it said, or undefined when it did not end in time. */
async function inChild(
  dir: string,
  how: "read" | "gate",
  replace?: string,
): Promise<{ kind: string; why?: string } | undefined> {
  const src = path.resolve(import.meta.dirname!, "../../../src/lock");
  const script = path.join(dir, "..", `probe-${how}.ts`);
  writeFileSync(
    script,
    `import { rmSync, symlinkSync, mkdirSync } from "node:fs";
import { spawnSync } from "node:child_process";
import process from "node:process";
import { readLockState } from ${JSON.stringify(path.join(src, "file.ts"))};
import { LockGate } from ${JSON.stringify(path.join(src, "gate.ts"))};
const dir = ${JSON.stringify(dir)};
const lock = ${JSON.stringify(path.join(dir, "hermit.lock"))};
const replace = ${JSON.stringify(replace ?? "")};
if (${JSON.stringify(how)} === "read") {
  console.log(JSON.stringify(readLockState(dir)));
} else {
  const gate = new LockGate(dir, {
    mode: "enforce",
    acceptWith: "hermit lock .",
    onChange: () => {
      console.log(JSON.stringify(gate.state));
      process.exit(0);
    },
  });
  if (gate.state.kind !== "ok") throw new Error("the lock to start from is not ok");
  gate.watch();
  rmSync(lock);
  if (replace === "fifo") spawnSync("mkfifo", [lock]);
  else if (replace === "dir") mkdirSync(lock);
  else symlinkSync(replace, lock);
  setTimeout(() => {}, 30_000);
}
`,
  );
  const deno = (globalThis as unknown as { Deno?: { execPath(): string } }).Deno;
  const config = path.resolve(src, "../../deno.json"); // the script is outside the project: its npm imports
  const argv = deno
    ? [deno.execPath(), "run", "-A", "--no-check", "--config", config, script]
    : [process.execPath, script];
  // stdin: a pipe kept open and silent, as a host's JSON-RPC stream is (a named one, held open for
  // writing here: Bun's own stdin "pipe" is a socket)
  const fifo = path.join(dir, "..", "stdin.fifo");
  spawnSync("mkfifo", [fifo]);
  const stdin = openSync(fifo, constants.O_RDWR);
  const child = spawn(argv[0], argv.slice(1), { stdio: [stdin, "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout!.setEncoding("utf8").on("data", (d) => (out += d));
  child.stderr!.setEncoding("utf8").on("data", (d) => (err += d));
  const ended = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      resolve(false);
    }, 10_000);
    child.on("close", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
  closeSync(stdin);
  if (!ended) return undefined;
  const line = out.trim().split("\n").pop() ?? "";
  assert.ok(line.startsWith("{"), `the probe printed no state: ${out}${err}`);
  return JSON.parse(line);
}

describe("reading hermit.lock, the file", { skip: process.platform === "win32" }, () => {
  const setUp = (make: (lock: string) => void) => {
    const tmp = tempDir();
    const dir = path.join(tmp.path, "A");
    mkdirSync(dir);
    make(path.join(dir, "hermit.lock"));
    return { tmp, dir };
  };
  const valid = (lock: string) => writeFileSync(lock, lockWith("npx", "left-pad", "1.3.0"));

  it("a regular lock reads as before (the probe itself works)", async () => {
    const { tmp, dir } = setUp(valid);
    try {
      assert.equal((await inChild(dir, "read"))?.kind, "ok");
    } finally {
      tmp.cleanup();
    }
  });

  const cases: [string, (lock: string) => void, RegExp][] = [
    ["a FIFO", (lock) => spawnSync("mkfifo", [lock]), /^not a regular file but a FIFO$/],
    [
      "a link to /dev/zero",
      (lock) => symlinkSync("/dev/zero", lock),
      /^not a regular file but a character device$/,
    ],
    [
      "a link to /dev/stdin (a pipe kept open)",
      (lock) => symlinkSync("/dev/stdin", lock),
      /^not a regular file but a FIFO$/,
    ],
    ["a directory", (lock) => mkdirSync(lock), /^not a regular file but a directory$/],
  ];
  for (const [what, make, expected] of cases) {
    it(`${what}: an invalid lock saying so, at once`, async () => {
      const { tmp, dir } = setUp(make);
      try {
        const state = await inChild(dir, "read");
        assert.ok(state, "read at once (it hung or ate memory before)");
        assert.equal(state.kind, "invalid");
        assert.match(state.why!, expected);
      } finally {
        tmp.cleanup();
      }
    });
  }

  it("past the size cap (4 MiB): an invalid lock naming the cap, without parsing it", async () => {
    const { tmp, dir } = setUp((lock) => writeFileSync(lock, "#".repeat(4 * 1024 * 1024 + 1)));
    try {
      const state = await inChild(dir, "read");
      assert.equal(state?.kind, "invalid");
      assert.equal(state.why, `${4 * 1024 * 1024 + 1} bytes, over the 4 MiB a lock may hold`);
    } finally {
      tmp.cleanup();
    }
  });

  for (const [what, replace] of [["a FIFO", "fifo"], ["a link to /dev/zero", "/dev/zero"]] as const) {
    it(`a running gateway's poll: a lock replaced by ${what} is an invalid lock, at once`, async () => {
      const { tmp, dir } = setUp(valid);
      try {
        const state = await inChild(dir, "gate", replace);
        assert.ok(state, "the poll read it at once (it hung or ate memory before)");
        assert.equal(state.kind, "invalid");
        assert.match(state.why!, /^not a regular file but a (FIFO|character device)$/);
      } finally {
        tmp.cleanup();
      }
    });
  }
});
