/**
 * What `hermit add` writes into hermit.lock when the lock on disk changed while its entry ran:
 * the lock as it is now with the added server's entry from the run, so a server another add locked
 * meanwhile is kept; without a readable lock on disk, the run's whole lock. And the write lock in
 * hermit's state directory: one planted there (a folder, a symlink) is an error naming it.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { describe, it } from "node:test";
import { HermitError } from "../../../src/errors.ts";
import { lockWithServer, readAtWrite, whileWriting } from "../../../src/lock/commit.ts";
import { tempDir } from "../../helpers/tmp.ts";
import type { Lock, LockedServer } from "../../../src/lock/types.ts";

const server = (command: string): LockedServer => ({ command, tools: {} });
const lock = (servers: Record<string, LockedServer>): Lock => ({ format: 1, servers });

describe("lockWithServer", () => {
  it("keeps a server another writer locked meanwhile, and takes the added one from the run", () => {
    const ran = lock({ base: server("base v1"), memory: server("memory") });
    const now = lock({ base: server("base v2"), thinking: server("thinking") });
    const out = lockWithServer({ kind: "ok", lock: now }, ran, "memory");
    assert.deepEqual(out.servers, {
      base: server("base v2"),
      thinking: server("thinking"),
      memory: server("memory"),
    });
  });

  it("the added server's entry is the run's even when the lock on disk has one by that name", () => {
    const out = lockWithServer(
      { kind: "ok", lock: lock({ memory: server("old") }) },
      lock({ memory: server("new") }),
      "memory",
    );
    assert.deepEqual(out.servers, { memory: server("new") });
  });

  it("without a readable lock on disk: the run's whole lock", () => {
    const ran = lock({ base: server("base"), memory: server("memory") });
    assert.equal(lockWithServer({ kind: "none" }, ran, "memory"), ran);
    assert.equal(lockWithServer({ kind: "invalid", why: "x" }, ran, "memory"), ran);
  });

  it("a server named __proto__ is an entry like any other", () => {
    const proto = JSON.parse('{"__proto__": {"command": "p", "tools": {}}}') as Record<string, LockedServer>;
    const out = lockWithServer({ kind: "ok", lock: lock({ a: server("a") }) }, lock(proto), "__proto__");
    assert.deepEqual(Object.keys(out.servers).sort(), ["__proto__", "a"]);
    assert.equal(Object.getPrototypeOf(out.servers), Object.prototype);
  });
});

describe("whileWriting", { skip: process.platform === "win32" }, () => {
  for (const planted of ["a folder", "a symlink"] as const) {
    it(`a write lock that is ${planted} is an error naming it, nothing written, nothing made through it`, async () => {
      const tmp = tempDir();
      const saved = process.env.HERMIT_HOME;
      try {
        process.env.HERMIT_HOME = tmp.path;
        const file = path.join(tmp.path, "adapter-write.lock");
        const outside = path.join(tmp.path, "outside");
        if (planted === "a folder") mkdirSync(file);
        else symlinkSync(outside, file);
        let wrote = false;
        await assert.rejects(whileWriting(() => (wrote = true)), (err: Error) => {
          assert.ok(err instanceof HermitError, String(err));
          assert.ok(err.message.startsWith(`cannot open the lock ${file} (`), err.message);
          assert.match(err.message, /\); remove it$/);
          return true;
        });
        assert.equal(wrote, false);
        assert.ok(!existsSync(outside));
      } finally {
        if (saved === undefined) delete process.env.HERMIT_HOME;
        else process.env.HERMIT_HOME = saved;
        tmp.cleanup();
      }
    });
  }
});

describe("readAtWrite", () => {
  it("hermit.yaml removed since the run began: an error naming it, exit 3", () => {
    const tmp = tempDir();
    try {
      assert.throws(
        () => readAtWrite(path.join(tmp.path, "hermit.yaml"), "my-tools/hermit.yaml"),
        (err: Error) => {
          assert.ok(err instanceof HermitError, String(err));
          assert.equal(err.exitCode, 3);
          assert.equal(
            err.message,
            "my-tools/hermit.yaml was removed or made unreadable (ENOENT) while its servers ran; nothing written",
          );
          return true;
        },
      );
    } finally {
      tmp.cleanup();
    }
  });
});

describe("whileWriting, interrupted", { skip: process.platform === "win32" }, () => {
  it("a Ctrl-C during the write ends the process once both files are written, of the signal", async () => {
    const tmp = tempDir();
    try {
      const first = path.join(tmp.path, "hermit.yaml");
      const second = path.join(tmp.path, "hermit.lock");
      const script = path.join(tmp.path, "writer.ts");
      const commit = path.resolve(import.meta.dirname!, "../../../src/lock/commit.ts");
      writeFileSync(
        script,
        `import { writeFileSync } from "node:fs";
import { whileWriting } from ${JSON.stringify(commit)};
await whileWriting(() => {
  writeFileSync(${JSON.stringify(first)}, "written\\n");
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1500); // a slow disk
  writeFileSync(${JSON.stringify(second)}, "written\\n");
});
console.log("ended normally");
`,
      );
      const deno = (globalThis as unknown as { Deno?: { execPath(): string } }).Deno;
      const argv = deno ? [deno.execPath(), "run", "-A", "--no-check", script] : [process.execPath, script];
      const child = spawn(argv[0], argv.slice(1), {
        env: { ...process.env, HERMIT_HOME: path.join(tmp.path, "home") },
        stdio: ["ignore", "pipe", "inherit"],
      });
      let out = "";
      child.stdout.setEncoding("utf8").on("data", (d) => (out += d));
      const ended = new Promise<NodeJS.Signals | null>((r) =>
        child.on("close", (_code, signal) => r(signal))
      );
      const t0 = Date.now();
      while (!existsSync(first) && Date.now() - t0 < 30_000) await new Promise((r) => setTimeout(r, 20));
      child.kill("SIGINT");
      assert.equal(await ended, "SIGINT", "ended of the signal");
      assert.ok(existsSync(second), "hermit.lock written too: the files are in step");
      assert.equal(out, "", "nothing after the write ran");
    } finally {
      tmp.cleanup();
    }
  });
});
