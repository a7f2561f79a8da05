/**
 * `keepLoopbackOffProxies` (src/mcp/http_transport.ts): with a proxy set, the loopback names join
 * NO_PROXY and no_proxy, each the union of both; nothing changes without a proxy or with `*`. The
 * e2e side (a proxy that gets nothing) is in tests/e2e/remote_cleartext.test.ts.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { keepLoopbackOffProxies } from "../../../src/mcp/http_transport.ts";

describe("keepLoopbackOffProxies", () => {
  it("adds the loopback names to both lists, keeping every entry of either", () => {
    const env: Record<string, string | undefined> = {
      https_proxy: "http://proxy.corp:3128",
      NO_PROXY: "corp.example, .internal",
      no_proxy: "build.local",
    };
    keepLoopbackOffProxies(env);
    const want = "corp.example,.internal,build.local,localhost,127.0.0.1,::1";
    assert.equal(env.NO_PROXY, want);
    assert.equal(env.no_proxy, want);
    keepLoopbackOffProxies(env);
    assert.equal(env.NO_PROXY, want); // idempotent
  });

  it("leaves the environment alone without a proxy, or when nothing is proxied anyway", () => {
    const none: Record<string, string | undefined> = { NO_PROXY: "x" };
    keepLoopbackOffProxies(none);
    assert.deepEqual(none, { NO_PROXY: "x" });
    const star: Record<string, string | undefined> = { HTTP_PROXY: "http://p:1", no_proxy: "*" };
    keepLoopbackOffProxies(star);
    assert.deepEqual(star, { HTTP_PROXY: "http://p:1", no_proxy: "*" });
  });
});
