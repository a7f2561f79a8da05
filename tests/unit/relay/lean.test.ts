/**
 * The pieces that keep a relay's memory down, each checked for doing the same as what it replaces:
 * the environment of the image re-executed without the JIT (and that nothing but the compiled
 * binary re-executes), SHA-256 through Bun's hasher equal to node:crypto's, the loopback check
 * without a regular expression, garbage collections paced by messages, and the launcher a relay
 * without the JIT starts: its refusal arrives with the launcher's own message and exit code.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdirSync, symlinkSync } from "node:fs";
import path from "node:path";
import { Exit, HermitError } from "../../../src/errors.ts";
import { gcPacer } from "../../../src/platform/gc.ts";
import { forgetReexec, jitlessImage, reexecEnv, withoutJit } from "../../../src/platform/no_jit.ts";
import { sha256Hex } from "../../../src/platform/sha256.ts";
import { launchInChild } from "../../../src/relay/launcher.ts";
import { relayArgs } from "../../../src/relay/main.ts";
import { isLoopbackName } from "../../../src/gates/loopback.ts";
import type { Manifest } from "../../../src/manifest/types.ts";
import { writeStandaloneAdapter } from "../../helpers/service.ts";
import { tempDir } from "../../helpers/tmp.ts";

describe("the image without the JIT", () => {
  it("starts with the switch and a mark, and takes both out of its environment again", () => {
    const env = reexecEnv({ PATH: "/bin", HERMIT_HOME: "/h", GONE: undefined });
    assert.deepEqual(env, {
      PATH: "/bin",
      HERMIT_HOME: "/h",
      HERMIT_NO_JIT_IMAGE: "BUN_JSC_useJIT,BUN_GC_TIMER_DISABLE",
      BUN_JSC_useJIT: "0",
      BUN_GC_TIMER_DISABLE: "1",
    });
    assert.equal(forgetReexec(env), true);
    assert.deepEqual(env, { PATH: "/bin", HERMIT_HOME: "/h" }, "nothing left for the processes it starts");
    assert.equal(forgetReexec({ BUN_JSC_useJIT: "0" }), false, "a user's switch is not the relay's");
  });

  it("Bun's GC timer is switched off in the image, unless the user configured it", () => {
    for (const mine of [{ BUN_GC_TIMER_INTERVAL: "500" }, { BUN_GC_TIMER_DISABLE: "" }]) {
      const env = reexecEnv({ PATH: "/bin", ...mine });
      assert.deepEqual(env, {
        PATH: "/bin",
        ...mine,
        HERMIT_NO_JIT_IMAGE: "BUN_JSC_useJIT",
        BUN_JSC_useJIT: "0",
      });
      assert.equal(forgetReexec(env), true);
      assert.deepEqual(
        env,
        { PATH: "/bin", ...mine },
        "the user's own variable stays for what the relay starts",
      );
    }
  });

  it("only the compiled binary re-executes: from sources nothing happens", () => {
    const env = { BUN_JSC_useJIT: undefined, PATH: "/bin" };
    assert.equal(withoutJit(env), false);
    assert.deepEqual(env, { BUN_JSC_useJIT: undefined, PATH: "/bin" });
    assert.equal(jitlessImage(), false);
  });
});

describe("SHA-256", () => {
  it("is node:crypto's digest, in hex", () => {
    for (const text of ["", "abc", '{"name":"x","tools_include":[]}', "grüße ✓ 𝄞", "x".repeat(100_000)]) {
      assert.equal(sha256Hex(text), createHash("sha256").update(text).digest("hex"));
    }
  });
});

describe("loopback names", () => {
  it("127.x.y.z, localhost and [::1], as URL.hostname spells them; nothing else", () => {
    for (const h of ["127.0.0.1", "127.1.2.3", "127.255.255.255", "localhost", "[::1]"]) {
      assert.equal(isLoopbackName(h), true, h);
    }
    for (
      const h of ["128.0.0.1", "127.0.0", "127.0.0.1.2", "127.a.0.1", "127..0.1", "::1", "", "localhost."]
    ) {
      assert.equal(isLoopbackName(h), false, h);
    }
    assert.equal(isLoopbackName(new URL("http://127.000.000.001:80/").hostname), true);
  });
});

describe("garbage collection pacing", () => {
  it("asks for a young-generation collection every N messages under Bun, and is free elsewhere", () => {
    const bun = (globalThis as { Bun?: { gc(force: boolean): void } }).Bun;
    const tick = gcPacer(3);
    if (!bun) {
      for (let i = 0; i < 10; i++) tick();
      return;
    }
    const calls: boolean[] = [];
    const real = bun.gc;
    bun.gc = (force) => void calls.push(force);
    try {
      for (let i = 0; i < 7; i++) tick();
    } finally {
      bun.gc = real;
    }
    assert.deepEqual(calls, [false, false]);
  });
});

describe("the launcher", () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());

  it("is a relay command line of its own, not with --serve-url", () => {
    assert.equal(relayArgs(["dir", "--launch-service"])?.launchOnly, true);
    assert.equal(relayArgs(["dir"])?.launchOnly, false);
    assert.equal(relayArgs(["dir", "--launch-service", "--serve-url", "http://127.0.0.1:1/mcp"]), undefined);
  });

  it("a refusal comes back with the launcher's own message and exit code", async () => {
    const dir = path.join(tmp.path, "adapter");
    mkdirSync(dir);
    writeStandaloneAdapter(dir);
    mkdirSync(path.join(tmp.path, "elsewhere"));
    symlinkSync(path.join(tmp.path, "elsewhere"), path.join(dir, ".serve"));
    const m = { dir, name: "shared" } as Manifest;
    const err = await launchInChild(m).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof HermitError, String(err));
    assert.equal(err.exitCode, Exit.refused);
    assert.match(err.message, /^refusing .*\.serve: it is a symbolic link/);
  });
});
