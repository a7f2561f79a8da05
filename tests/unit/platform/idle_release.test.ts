/**
 * The idle release (src/platform/idle_release.ts): when it gives memory back, on a fake clock, and
 * how HERMIT_IDLE_RELEASE is read. What a release does to a running serve is serve_lean's (e2e).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  DEFAULT_IDLE_RELEASE_SECONDS,
  idleRelease,
  idleReleaseMs,
  idleStep,
} from "../../../src/platform/idle_release.ts";
import { FakeClock } from "../../helpers/fake_clock.ts";

describe("idle release", () => {
  it("the step: release once the quiet time is reached, else wait the rest; nothing twice", () => {
    assert.deepEqual(idleStep({ last: 100, released: false }, 1100, 1000), { kind: "release" });
    assert.deepEqual(idleStep({ last: 100, released: false }, 1500, 1000), { kind: "release" });
    assert.deepEqual(idleStep({ last: 100, released: false }, 400, 1000), { kind: "wait", ms: 700 });
    assert.deepEqual(idleStep({ last: 100, released: true }, 5000, 1000), { kind: "none" });
  });

  it("gives memory back after a quiet spell counted from start, then only after new traffic", () => {
    const clock = new FakeClock();
    let released = 0;
    const idle = idleRelease(1000, () => released++, clock);
    clock.advance(999);
    assert.equal(released, 0);
    clock.advance(1);
    assert.equal(released, 1, "start-up leaves garbage too");
    clock.advance(60_000);
    assert.equal(released, 1, "a process that stays quiet is not woken again");
    assert.equal(clock.pending, 0, "and no timer is left running");
    idle.touch();
    clock.advance(1000);
    assert.equal(released, 2);
  });

  it("traffic keeps it from releasing; one timer however many messages pass", () => {
    const clock = new FakeClock();
    let released = 0;
    const idle = idleRelease(1000, () => released++, clock);
    for (let i = 0; i < 50; i++) {
      clock.advance(300);
      idle.touch();
      idle.touch();
      assert.ok(clock.pending <= 1, `${clock.pending} timers`);
    }
    assert.equal(released, 0, "busy for 15 s, never quiet for 1 s");
    clock.advance(999);
    assert.equal(released, 0);
    clock.advance(1);
    assert.equal(released, 1, "1 s after the last message");
  });

  it("stop: no release after it, traffic or not", () => {
    const clock = new FakeClock();
    let released = 0;
    const idle = idleRelease(1000, () => released++, clock);
    clock.advance(500);
    idle.stop();
    idle.touch();
    clock.advance(10_000);
    assert.equal(released, 0);
  });

  it("HERMIT_IDLE_RELEASE: seconds, 0 is never, anything else the default", () => {
    const def = DEFAULT_IDLE_RELEASE_SECONDS * 1000;
    assert.equal(idleReleaseMs({}), def);
    assert.equal(idleReleaseMs({ HERMIT_IDLE_RELEASE: "5" }), 5000);
    assert.equal(idleReleaseMs({ HERMIT_IDLE_RELEASE: " 2.5 " }), 2500);
    assert.equal(idleReleaseMs({ HERMIT_IDLE_RELEASE: "0" }), undefined);
    assert.equal(idleReleaseMs({ HERMIT_IDLE_RELEASE: "0.0001" }), 1, "at least 1 ms");
    for (const bad of ["", "soon", "-3", "Infinity", "NaN"]) {
      assert.equal(idleReleaseMs({ HERMIT_IDLE_RELEASE: bad }), def, bad);
    }
  });
});
