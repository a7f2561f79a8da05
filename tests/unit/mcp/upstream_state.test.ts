/**
 * The upstream's pure state machine (src/mcp/upstream_state.ts): the transitions and their
 * actions pinned, the admission rule (cooldown, a login that changed), and properties: a stopped
 * upstream stays stopped whatever comes after, and an attempt's outcome counts only in its epoch.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  admit,
  initialLife,
  type Life,
  type LifeAction,
  type LifeEvent,
  MAX_RECONNECTS,
  step,
} from "../../../src/mcp/upstream_state.ts";

function run(events: LifeEvent[], from: Life = initialLife): { life: Life; actions: LifeAction[] } {
  let life = from;
  const actions: LifeAction[] = [];
  for (const e of events) {
    const out = step(life, e);
    life = out.life;
    actions.push(...out.actions);
  }
  return { life, actions };
}

const fail = (epoch: number, now = 0, kind: "error" | "needs-login" | "refused" = "error"): LifeEvent => ({
  type: "failed",
  epoch,
  now,
  error: "boom",
  kind,
});

describe("upstream state machine", () => {
  it("connect, open: connected, the attempt goes live", () => {
    const { life, actions } = run([{ type: "connect" }, { type: "opened", epoch: 1 }]);
    assert.equal(life.state, "connected");
    assert.deepEqual(actions, [{ type: "go-live" }]);
  });

  it("a failed connect cools down on the curve; a new attempt later, a success resets", () => {
    const { life } = run([{ type: "connect" }, fail(1, 1000)]);
    assert.deepEqual([life.state, life.failures, life.retryAfter], ["cooldown", 1, 31_000]);
    const second = run([{ type: "connect" }, fail(2, 40_000)], life).life;
    assert.deepEqual([second.failures, second.retryAfter], [2, 100_000]);
    const ok = run([{ type: "connect" }, { type: "opened", epoch: 3 }], second).life;
    assert.deepEqual([ok.state, ok.failures, ok.lastError], ["connected", 0, undefined]);
  });

  it("a refused config stops for good; a login failure waits for the login", () => {
    const refused = run([{ type: "connect" }, fail(1, 0, "refused")]).life;
    assert.deepEqual([refused.state, refused.refusal], ["stopped", "boom"]);
    const login = run([{ type: "connect" }, fail(1, 0, "needs-login")]);
    assert.equal(login.life.state, "cooldown");
    assert.deepEqual(login.actions, [{ type: "await-login" }]);
  });

  it("a lost connection closes it and reconnects with backoff, five times, then cools down", () => {
    const connected = run([{ type: "connect" }, { type: "opened", epoch: 1 }]).life;
    const lost = step(connected, { type: "lost" });
    assert.equal(lost.life.state, "reconnecting");
    assert.deepEqual(lost.actions, [{ type: "close-live" }, { type: "schedule-retry", attempt: 1 }]);
    assert.deepEqual(step(lost.life, { type: "retry-due" }).actions, [{ type: "connect" }]);
    let life = lost.life;
    const retries: LifeAction[] = [];
    for (let i = 0; i < MAX_RECONNECTS; i++) {
      const out = run([{ type: "connect" }, fail(life.epoch + 1)], life);
      life = out.life;
      retries.push(...out.actions);
    }
    assert.deepEqual(retries, [2, 3, 4, 5].map((attempt) => ({ type: "schedule-retry", attempt })));
    assert.equal(life.state, "cooldown");
  });

  it("a recycle closes the live connection; the next connect starts it again", () => {
    const connected = run([{ type: "connect" }, { type: "opened", epoch: 1 }]).life;
    const r = step(connected, { type: "recycle" });
    assert.deepEqual([r.life.state, r.actions], ["recycled", [{ type: "close-live" }]]);
    assert.equal(step(r.life, { type: "connect" }).life.state, "connecting");
  });

  it("stop during a connect: the attempt's late success is discarded, its failure ignored", () => {
    const stopped = run([{ type: "connect" }, { type: "stop" }]);
    assert.equal(stopped.life.state, "stopped");
    assert.deepEqual(stopped.actions, [{ type: "close-live" }, { type: "discard-attempt" }]);
    assert.deepEqual(step(stopped.life, { type: "opened", epoch: 1 }), {
      life: stopped.life,
      actions: [{ type: "discard-attempt" }],
    });
    assert.deepEqual(step(stopped.life, fail(1)).life, stopped.life);
  });

  it("property: nothing leads out of stopped, and nothing but discarding happens there", () => {
    const event = fc.oneof(
      fc.constant<LifeEvent>({ type: "connect" }),
      fc.nat(5).map((epoch): LifeEvent => ({ type: "opened", epoch })),
      fc.tuple(fc.nat(5), fc.constantFrom("error", "needs-login", "refused")).map(([epoch, kind]) =>
        fail(epoch, 0, kind as "error")
      ),
      fc.constantFrom<LifeEvent>({ type: "lost" }, { type: "retry-due" }, { type: "recycle" }, {
        type: "stop",
      }),
    );
    fc.assert(fc.property(fc.array(event, { maxLength: 20 }), fc.array(event, { maxLength: 20 }), (a, b) => {
      const stopped = run([...a, { type: "stop" }]).life;
      const after = run(b, stopped);
      assert.equal(after.life.state, "stopped");
      assert.ok(after.actions.every((x) => x.type === "discard-attempt"), JSON.stringify(after.actions));
    }));
  });

  it("property: an outcome from another epoch never changes the state", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom<LifeEvent>({ type: "connect" }), { maxLength: 5 }), (c) => {
        const life = run([...c, { type: "connect" }]).life;
        const stale = life.epoch - 1;
        assert.equal(step(life, { type: "opened", epoch: stale }).life, life);
        assert.equal(step(life, fail(stale)).life, life);
      }),
    );
  });
});

describe("admission", () => {
  const cooling = run([{ type: "connect" }, fail(1, 0)]).life; // retryAfter 30 s
  const login = { waiting: false, changed: false };

  it("waits out the cooldown, saying how long", () => {
    assert.deepEqual(admit(cooling, 10_000, login), { go: false, why: "cooldown", retryInSeconds: 20 });
    assert.deepEqual(admit(cooling, 30_000, login), { go: true });
  });
  it("a waiting login refuses until the login changes, then goes at once", () => {
    assert.deepEqual(admit(cooling, 0, { waiting: true, changed: false }), { go: false, why: "needs-login" });
    assert.deepEqual(admit(cooling, 0, { waiting: true, changed: true }), { go: true });
  });
  it("a stopped upstream never goes", () => {
    assert.deepEqual(admit(step(cooling, { type: "stop" }).life, 1e12, login), { go: false, why: "stopped" });
  });
});
