/**
 * The sandbox launcher's environment (src/sandbox/spawn.ts, launcher.ts): what the dynamic loader
 * or Bun acts on at a program's start is set aside for the launcher, which is not yet confined,
 * and set back for the target; the launcher's own switches never reach the target.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ENV_ASIDE, targetEnv } from "../../../src/sandbox/launcher.ts";
import { launcherEnvFor } from "../../../src/sandbox/spawn.ts";

describe("the launcher's environment", () => {
  const entry = {
    PATH: "/usr/bin",
    LD_PRELOAD: "/x.so",
    LD_LIBRARY_PATH: "/lib/x",
    LD_AUDIT: "/a.so",
    BUN_OPTIONS: "--preload /x.js",
    BUN_BE_BUN: "1",
    BUN_JSC_useConcurrentGC: "1",
    NODE_OPTIONS: "--require /x.js",
    DENO_V8_FLAGS: "--allow-natives-syntax",
    GCONV_PATH: "/g",
    TOKEN: "t",
    OLD_PRELOAD: "not a loader variable",
  };

  it("starts without what runs at a program's start", () => {
    const env = launcherEnvFor(entry);
    for (
      const k of [
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "LD_AUDIT",
        "BUN_OPTIONS",
        "BUN_BE_BUN",
        "NODE_OPTIONS",
        "GCONV_PATH",
      ]
    ) {
      assert.equal(env[k], undefined, k);
      assert.equal(env[ENV_ASIDE + k], entry[k as keyof typeof entry], `${k} set aside`);
    }
    assert.equal(env.BUN_JSC_useConcurrentGC, "0", "the launcher's own switch, not the entry's");
    assert.deepEqual([env.PATH, env.TOKEN, env.OLD_PRELOAD], ["/usr/bin", "t", "not a loader variable"]);
  });

  it("the target gets the entry's environment back, exactly, and none of the launcher's switches", () => {
    const launcher = launcherEnvFor(entry);
    const back = Object.fromEntries(
      targetEnv(launcher, [
        "BUN_JSC_useConcurrentGC",
        "BUN_JSC_useConcurrentJIT",
        "BUN_JSC_useWarmUpMarkedBlocks",
      ])
        .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
    );
    assert.deepEqual(back, entry);
  });
});
