/**
 * `src/platform/http.ts` on the runtime running the test (Deno.serve or Bun.serve): a handler
 * that throws, or whose promise rejects, answers a plain 500 with no stack trace or error text.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { type HttpServer, serveHttp } from "../../../src/platform/http.ts";
import { setLogLevel } from "../../../src/log.ts";

let server: HttpServer;
before(async () => {
  setLogLevel("silent");
  server = await serveHttp("127.0.0.1", 0, (req) => {
    const url = new URL(req.url);
    if (url.pathname === "/throw") throw new Error("secret detail in a thrown error");
    if (url.pathname === "/reject") return Promise.reject(new Error("secret detail in a rejection"));
    return new Response("ok");
  });
});
after(async () => {
  await server.close();
  setLogLevel("info");
});

describe("serveHttp", () => {
  it("serves the handler's response", async () => {
    const res = await fetch(`http://127.0.0.1:${server.port}/`);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), "ok");
  });

  for (const route of ["/throw", "/reject"]) {
    it(`a handler failure (${route}) is a bare 500: no stack, no error text`, async () => {
      const res = await fetch(`http://127.0.0.1:${server.port}${route}`);
      const body = await res.text();
      assert.equal(res.status, 500);
      assert.equal(body.trim(), "Internal Server Error");
      assert.doesNotMatch(body, /secret detail|\bat\s|http\.test\.ts/);
    });
  }
});
