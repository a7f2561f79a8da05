/**
 * Gate 6, sampling and elicitation requested by an upstream: the sliding one-minute rate window,
 * the max-tokens clamp, the tool-round cap, model overrides, URL-mode elicitation declined, and
 * the defaults (10/min, 30 s, 4096 tokens, 5 rounds) pinned literally.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { CreateMessageRequest } from "@modelcontextprotocol/sdk/types.js";
import { checkElicitation, checkSampling, RateWindow, toolRounds } from "../../../src/gates/sampling.ts";
import { parseManifest } from "../../../src/manifest/load.ts";
import type { SamplingPolicy } from "../../../src/manifest/types.ts";

type Params = CreateMessageRequest["params"];
const POLICY: SamplingPolicy = {
  enabled: true,
  maxRpm: 10,
  timeoutSeconds: 30,
  maxTokensCap: 4096,
  maxToolRounds: 5,
  allowedModels: [],
};
const ask = (
  maxTokens = 100,
  messages: Params["messages"] = [{ role: "user", content: { type: "text", text: "hi" } }],
): Params => ({
  messages,
  maxTokens,
});

function rounds(n: number): Params["messages"] {
  const out: Params["messages"] = [{ role: "user", content: { type: "text", text: "go" } }];
  for (let i = 0; i < n; i++) {
    out.push({ role: "assistant", content: [{ type: "tool_use", id: `c${i}`, name: "search", input: {} }] });
    out.push({ role: "user", content: [{ type: "tool_result", toolUseId: `c${i}`, content: [] }] });
  }
  return out;
}

describe("sampling: what the host is asked to add", () => {
  it("includeContext is dropped: an upstream gets no other server's context (hermit is one server to the host)", () => {
    for (const includeContext of ["thisServer", "allServers", "none"] as const) {
      const v = checkSampling({ ...ask(), includeContext }, POLICY, new RateWindow(10));
      assert.ok(v.ok);
      assert.equal("includeContext" in v.params, false, includeContext);
    }
  });
});

describe("sampling: defaults", () => {
  it("a server without a sampling section gets 10/min, 30 s, 4096 tokens, 5 rounds; elicitation 300 s", () => {
    const m =
      parseManifest("name: t\nmcp_servers:\n  s:\n    command: node\n", "/tmp/hermit.yaml", "/tmp").manifest;
    assert.deepEqual(m.upstreams.s.sampling, {
      enabled: true,
      maxRpm: 10,
      timeoutSeconds: 30,
      maxTokensCap: 4096,
      maxToolRounds: 5,
      model: undefined,
      allowedModels: [],
    });
    assert.deepEqual(m.upstreams.s.elicitation, { enabled: true, timeoutSeconds: 300 });
  });

  it("each limit is configurable per server", () => {
    const m = parseManifest(
      "name: t\nmcp_servers:\n  s:\n    command: node\n    sampling: { max_rpm: 2, timeout: 5, max_tokens_cap: 64, max_tool_rounds: 0 }\n    elicitation: { enabled: false, timeout: 9 }\n",
      "/tmp/hermit.yaml",
      "/tmp",
    ).manifest;
    assert.deepEqual(
      { ...m.upstreams.s.sampling, elicitation: m.upstreams.s.elicitation },
      {
        enabled: true,
        maxRpm: 2,
        timeoutSeconds: 5,
        maxTokensCap: 64,
        maxToolRounds: 0,
        model: undefined,
        allowedModels: [],
        elicitation: { enabled: false, timeoutSeconds: 9 },
      },
    );
  });
});

describe("RateWindow", () => {
  it("allows perMinute requests in any 60 s, and slides", () => {
    const w = new RateWindow(3);
    const t0 = 1_000_000;
    assert.deepEqual([w.take(t0), w.take(t0 + 10_000), w.take(t0 + 20_000), w.take(t0 + 30_000)], [
      true,
      true,
      true,
      false,
    ]);
    assert.equal(w.take(t0 + 59_999), false, "the first request is still inside the window");
    assert.equal(w.take(t0 + 60_000), true, "the first request has left the window");
    assert.equal(w.take(t0 + 60_001), false);
    assert.equal(w.take(t0 + 70_000), true, "the second has left");
  });

  it("a refused request does not take a slot", () => {
    const w = new RateWindow(1);
    assert.equal(w.take(0), true);
    for (let t = 1; t < 60_000; t += 5_000) assert.equal(w.take(t), false);
    assert.equal(w.take(60_000), true);
  });

  it("zero per minute allows nothing", () => {
    assert.equal(new RateWindow(0).take(0), false);
  });
});

describe("checkSampling", () => {
  it("clamps maxTokens to the cap and leaves smaller requests alone", () => {
    const v = checkSampling(ask(100_000), POLICY, new RateWindow(10), 0);
    assert.ok(v.ok);
    assert.equal(v.params.maxTokens, 4096);
    const small = checkSampling(ask(50), POLICY, new RateWindow(10), 0);
    assert.ok(small.ok && small.params.maxTokens === 50);
  });

  it("refuses past the rate limit", () => {
    const w = new RateWindow(10);
    for (let i = 0; i < 10; i++) assert.equal(checkSampling(ask(), POLICY, w, i).ok, true);
    assert.deepEqual(checkSampling(ask(), POLICY, w, 10), {
      ok: false,
      reason: "more than 10 sampling requests a minute (max_rpm)",
    });
    assert.equal(checkSampling(ask(), POLICY, w, 60_000).ok, true);
  });

  it("counts tool rounds and refuses past max_tool_rounds; 0 disables tool loops", () => {
    assert.equal(toolRounds(ask()), 0);
    assert.equal(toolRounds(ask(10, rounds(3))), 3);
    assert.equal(checkSampling(ask(10, rounds(5)), POLICY, new RateWindow(10), 0).ok, true);
    assert.deepEqual(checkSampling(ask(10, rounds(6)), POLICY, new RateWindow(10), 0), {
      ok: false,
      reason: "more than 5 tool rounds (max_tool_rounds)",
    });
    assert.equal(
      checkSampling(ask(10, rounds(1)), { ...POLICY, maxToolRounds: 0 }, new RateWindow(10), 0).ok,
      false,
    );
  });

  it("refuses when disabled", () => {
    assert.deepEqual(checkSampling(ask(), { ...POLICY, enabled: false }, new RateWindow(10), 0), {
      ok: false,
      reason: "sampling is disabled for this server",
    });
  });

  it("applies the model override, or filters hints to allowed_models", () => {
    const hinted: Params = {
      ...ask(),
      modelPreferences: { hints: [{ name: "big" }, { name: "small" }], speedPriority: 1 },
    };
    const forced = checkSampling(hinted, { ...POLICY, model: "m1" }, new RateWindow(10), 0);
    assert.ok(forced.ok);
    assert.deepEqual(forced.params.modelPreferences, { hints: [{ name: "m1" }], speedPriority: 1 });
    const allowed = checkSampling(hinted, { ...POLICY, allowedModels: ["small"] }, new RateWindow(10), 0);
    assert.ok(allowed.ok);
    assert.deepEqual(allowed.params.modelPreferences?.hints, [{ name: "small" }]);
  });
});

describe("checkElicitation", () => {
  it("forwards form mode, declines URL mode and a disabled server", () => {
    const form = { message: "Name?", requestedSchema: { type: "object" as const, properties: {} } };
    assert.deepEqual(checkElicitation(form, true), { ok: true });
    assert.deepEqual(checkElicitation({ ...form, mode: "form" } as never, true), { ok: true });
    assert.deepEqual(
      checkElicitation(
        { mode: "url", message: "Log in", url: "https://x.example", elicitationId: "e" } as never,
        true,
      ),
      {
        ok: false,
        reason: "URL-mode elicitation is not supported",
      },
    );
    assert.deepEqual(checkElicitation(form, false), {
      ok: false,
      reason: "elicitation is disabled for this server",
    });
  });
});
