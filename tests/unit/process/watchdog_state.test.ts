/**
 * The watchdog's pure state machine (`src/process/watchdog.ts`): which groups it owns, when they
 * get SIGTERM, when SIGTERM turns into SIGKILL, and when the watchdog is done. No processes here;
 * `group.test.ts` and `tests/e2e/watchdog.test.ts` cover the real thing.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  initialState,
  step,
  type WatchdogAction,
  type WatchdogEvent,
  type WatchdogState,
} from "../../../src/process/watchdog.ts";

const config = { graceMs: 3000 };

/** Feed events in order; returns the final state and every action, in order. */
function run(events: WatchdogEvent[], from: WatchdogState = initialState) {
  let state = from;
  const actions: WatchdogAction[] = [];
  for (const e of events) {
    const out = step(state, e, config);
    state = out.state;
    actions.push(...out.actions);
  }
  return { state, actions };
}

const reg = (pgid: number): WatchdogEvent => ({ type: "register", pgid });
const unreg = (pgid: number): WatchdogEvent => ({ type: "unregister", pgid });
const gone = (now: number): WatchdogEvent => ({ type: "parent-gone", now, reason: "parent 42 is gone" });
const tick = (now: number, ...alive: number[]): WatchdogEvent => ({
  type: "tick",
  now,
  alive: new Set(alive),
});
const term = (pgid: number): WatchdogAction => ({ type: "signal", pgid, signal: "SIGTERM" });
const kill = (pgid: number): WatchdogAction => ({ type: "signal", pgid, signal: "SIGKILL" });

describe("watchdog state machine", () => {
  it("starts watching nothing", () => {
    assert.equal(initialState.phase, "watching");
    assert.equal(initialState.groups.size, 0);
  });

  it("registers and unregisters groups without acting", () => {
    const { state, actions } = run([reg(100), reg(200), reg(100), unreg(100), unreg(999)]);
    assert.deepEqual([...state.groups], [200]);
    assert.equal(state.phase, "watching");
    assert.deepEqual(actions, []);
  });

  it("ignores group ids that are not a real group (≤ 1, negative, fractional, NaN)", () => {
    const { state, actions } = run([reg(0), reg(1), reg(-5), reg(1.5), reg(NaN), reg(Infinity)]);
    assert.equal(state.groups.size, 0);
    assert.deepEqual(actions, []);
    // and a later stop has nobody to signal
    assert.deepEqual(run([gone(10)], state).actions, [{ type: "exit", reason: "parent 42 is gone" }]);
  });

  it("never mutates the state it was given", () => {
    const s1 = run([reg(100)]).state;
    const before = [...s1.groups];
    step(s1, reg(200), config);
    step(s1, unreg(100), config);
    step(s1, tick(5), config);
    step(s1, gone(5), config);
    assert.deepEqual([...s1.groups], before);
    assert.equal(s1.phase, "watching");
  });

  it("on parent-gone sends SIGTERM to every group and starts the grace period", () => {
    const { state, actions } = run([reg(100), reg(200), gone(1000)]);
    assert.equal(state.phase, "terminating");
    assert.equal(state.termAt, 1000);
    assert.equal(state.reason, "parent 42 is gone");
    assert.deepEqual(actions, [term(100), term(200)]);
  });

  it("with no groups, parent-gone exits at once", () => {
    const { state, actions } = run([gone(1000)]);
    assert.equal(state.phase, "done");
    assert.deepEqual(actions, [{ type: "exit", reason: "parent 42 is gone" }]);
  });

  it("waits out the grace period while groups live, then SIGKILLs the survivors and exits", () => {
    const s = run([reg(100), reg(200), gone(1000)]).state;
    const early = run([tick(1050, 100, 200), tick(2000, 100, 200), tick(3999, 100, 200)], s);
    assert.deepEqual(early.actions, []);
    assert.equal(early.state.phase, "terminating");
    // 200 died from its SIGTERM; 100 ignored it
    const late = run([tick(4000, 100)], early.state);
    assert.deepEqual(late.actions, [kill(100), { type: "exit", reason: "parent 42 is gone" }]);
    assert.equal(late.state.phase, "done");
    assert.equal(late.state.groups.size, 0);
  });

  it("exits without SIGKILL when every group dies within the grace period", () => {
    const s = run([reg(100), reg(200), gone(1000)]).state;
    const { state, actions } = run([tick(1100, 200), tick(1200)], s);
    assert.equal(state.phase, "done");
    assert.deepEqual(actions, [{ type: "exit", reason: "parent 42 is gone" }]);
    assert.ok(!actions.some((a) => a.type === "signal" && a.signal === "SIGKILL"));
  });

  it("a group dead at a tick after the grace period is not SIGKILLed", () => {
    const s = run([reg(100), reg(200), gone(0)]).state;
    const { actions } = run([tick(5000, 200)], s);
    assert.deepEqual(actions, [kill(200), { type: "exit", reason: "parent 42 is gone" }]);
  });

  it("a group registered while terminating gets SIGTERM at once", () => {
    const s = run([reg(100), gone(1000)]).state;
    const { state, actions } = run([reg(300)], s);
    assert.deepEqual(actions, [term(300)]);
    assert.deepEqual([...state.groups].sort(), [100, 300]);
    assert.equal(state.termAt, 1000, "the grace period is not restarted");
  });

  it("unregistering the last group while terminating exits", () => {
    const s = run([reg(100), reg(200), gone(1000)]).state;
    const { state, actions } = run([unreg(100), unreg(200)], s);
    assert.equal(state.phase, "done");
    assert.deepEqual(actions, [{ type: "exit", reason: "parent 42 is gone" }]);
  });

  it("stops only once: later stop events send nothing more", () => {
    const s = run([reg(100), gone(1000)]).state;
    const { state, actions } = run([
      gone(1500),
      { type: "signal", now: 1600, signal: "SIGINT" },
      { type: "command-exited", now: 1700 },
    ], s);
    assert.deepEqual(actions, []);
    assert.equal(state.termAt, 1000);
    assert.equal(state.reason, "parent 42 is gone");
  });

  it("a signal stops the groups like parent-gone does, with its own reason", () => {
    const { state, actions } = run([reg(100), { type: "signal", now: 7, signal: "SIGTERM" }]);
    assert.equal(state.reason, "received SIGTERM");
    assert.deepEqual(actions, [term(100)]);
  });

  it("command-exited stops what the command left behind, then exits", () => {
    const { state, actions } = run([reg(100), { type: "command-exited", now: 50 }]);
    assert.equal(state.phase, "terminating");
    assert.equal(state.reason, "command exited");
    assert.deepEqual(actions, [term(100)]);
    // the leader was the only process: the next tick finds the group empty
    assert.deepEqual(run([tick(60)], state).actions, [{ type: "exit", reason: "command exited" }]);
  });

  it("while watching, ticks forget groups that died on their own", () => {
    const { state, actions } = run([reg(100), reg(200), tick(10, 200)]);
    assert.deepEqual([...state.groups], [200]);
    assert.equal(state.phase, "watching");
    assert.deepEqual(actions, []);
    // so a reused pgid 100 is never signalled later
    assert.deepEqual(run([gone(20)], state).actions, [term(200)]);
  });

  it("done is absorbing: no event changes it or acts", () => {
    const done = run([reg(100), gone(0), tick(1)]).state;
    assert.equal(done.phase, "done");
    for (
      const e of [
        reg(500),
        unreg(100),
        gone(2),
        tick(99999, 100, 500),
        { type: "signal", now: 3, signal: "SIGTERM" } as const,
        { type: "command-exited", now: 4 } as const,
      ]
    ) {
      const out = step(done, e, config);
      assert.equal(out.state, done);
      assert.deepEqual(out.actions, []);
    }
  });

  it("property: SIGTERM before SIGKILL, grace honoured, one exit, nothing after it", () => {
    const pgid = fc.integer({ min: -2, max: 6 });
    const event: fc.Arbitrary<(now: number) => WatchdogEvent> = fc.oneof(
      pgid.map((p) => () => reg(p)),
      pgid.map((p) => () => unreg(p)),
      fc.constant((now: number) => gone(now)),
      fc.constant((now: number): WatchdogEvent => ({ type: "signal", now, signal: "SIGTERM" })),
      fc.constant((now: number): WatchdogEvent => ({ type: "command-exited", now })),
      fc.uniqueArray(pgid).map((alive) => (now: number) => tick(now, ...alive)),
    );
    fc.assert(fc.property(
      fc.array(fc.tuple(event, fc.integer({ min: 0, max: 2000 })), { maxLength: 40 }),
      (script) => {
        let state = initialState;
        let now = 0;
        const termed = new Map<number, number>();
        let exits = 0;
        for (const [make, dt] of script) {
          now += dt;
          const out = step(state, make(now), config);
          for (const a of out.actions) {
            assert.equal(exits, 0, "no action after exit");
            if (a.type === "exit") exits++;
            else {
              assert.ok(a.pgid > 1, "only real groups are signalled");
              assert.notEqual(state.phase, "done");
              if (a.signal === "SIGTERM") termed.set(a.pgid, now);
              else {
                assert.ok(termed.has(a.pgid), `SIGKILL to ${a.pgid} without SIGTERM`);
                assert.ok(now - out.state.termAt! >= config.graceMs, "SIGKILL before the grace ran out");
              }
            }
          }
          assert.equal(out.state.phase === "done", exits === 1);
          state = out.state;
        }
      },
    ));
  });
});
