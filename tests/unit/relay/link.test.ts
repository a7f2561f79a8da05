/**
 * `src/relay/link.ts` against a scripted HTTP server on loopback: what a POST comes to, told by
 * status and error code (an answer in JSON or in an SSE stream; 202; a 413 passed on with its
 * code; 404 for our session; 401; 5xx; a port nobody listens on), an answer's stream the service
 * closes early resumed with `Last-Event-ID` (SEP-1699), and the session DELETEd at close.
 */
import { SERVICE_BUSY } from "../../../src/service/http_errors.ts";
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createNetServer } from "node:net";
import type { Message } from "../../../src/relay/jsonrpc.ts";
import { ServiceLink } from "../../../src/relay/link.ts";
import { realClock } from "../../../src/platform/clock.ts";

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

async function serve(handler: Handler): Promise<{ url: string; seen: string[]; close(): void }> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8").on("data", (d) => (body += d)).on("end", () => {
      seen.push(
        `${req.method} ${req.headers["mcp-session-id"] ?? "-"} ${req.headers["last-event-id"] ?? "-"}`,
      );
      if (req.method === "DELETE") return void res.writeHead(200).end();
      handler(req, body, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`,
    seen,
    close: () => server.close(),
  };
}

const answer = (id: unknown, result: unknown = { ok: true }) =>
  JSON.stringify({ jsonrpc: "2.0", id, result });
const request = (id: number, method = "tools/list") => JSON.stringify({ jsonrpc: "2.0", id, method });

function link(url: string) {
  const got: Message[] = [];
  const l = new ServiceLink({ url, token: "secret" }, {
    onMessage: (m) => got.push(m),
    streamBroke: async () => false,
    streamRefused: () => {},
  }, realClock);
  return { l, got };
}

describe("ServiceLink", () => {
  const closers: (() => void)[] = [];
  after(() => closers.forEach((c) => c()));

  it("answers in JSON or SSE; 202 for a notification; the session id and the token go along", async () => {
    let sseNext = false;
    const s = await serve((req, body, res) => {
      assert.equal(req.headers.authorization, "Bearer secret");
      const m = JSON.parse(body);
      if (m.id === undefined) return void res.writeHead(202).end();
      if (sseNext) {
        return void res.writeHead(200, { "content-type": "text/event-stream" })
          .end(
            `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n\nevent: message\ndata: ${
              answer(m.id)
            }\n\n`,
          );
      }
      sseNext = true;
      res.writeHead(200, { "content-type": "application/json; charset=utf-8", "mcp-session-id": "S1" }).end(
        answer(m.id),
      );
    });
    closers.push(s.close);
    const { l, got } = link(s.url);
    assert.deepEqual(await l.post(request(1, "initialize"), 1), { kind: "answered" });
    assert.equal(l.sessionId, "S1");
    assert.deepEqual(await l.post('{"jsonrpc":"2.0","method":"notifications/initialized"}'), {
      kind: "accepted",
    });
    assert.deepEqual(await l.post(request(2), 2), { kind: "answered" });
    assert.deepEqual(got.map((m) => m.kind), ["response", "notification", "response"]);
    assert.deepEqual(s.seen, ["POST - -", "POST S1 -", "POST S1 -"]);
    await l.close();
    assert.equal(s.seen.at(-1), "DELETE S1 -", "the session is ended at close");
  });

  it("a JSON answer goes on as the service wrote it, unless it spans lines; a batch is split", async () => {
    // spacing and key order a re-serialization would change
    const asWritten = '{"id": 1, "jsonrpc": "2.0", "result": {"n": 1.50, "s": "\\u00e9"}}';
    const pretty = JSON.stringify({ jsonrpc: "2.0", id: 2, result: { ok: true } }, null, 2);
    const spaced = '{"jsonrpc":"2.0",\r"id":4,"result":{}}';
    const s = await serve((_req, body, res) => {
      const id = JSON.parse(body).id;
      const text = id === 1
        ? asWritten
        : id === 2
        ? pretty
        : id === 4
        ? spaced
        : `[${answer(id)},{"jsonrpc":"2.0","method":"notifications/message","params":{}}]`;
      res.writeHead(200, { "content-type": "application/json" }).end(text + "\n");
    });
    closers.push(s.close);
    const { l, got } = link(s.url);
    for (const id of [1, 2, 3, 4]) assert.deepEqual(await l.post(request(id), id), { kind: "answered" });
    const texts = got.map((m) => (m as { text: string }).text);
    assert.deepEqual(texts, [
      asWritten,
      '{"jsonrpc":"2.0","id":2,"result":{"ok":true}}',
      answer(3),
      '{"jsonrpc":"2.0","method":"notifications/message","params":{}}',
      '{"jsonrpc":"2.0","id":4,"result":{}}',
    ]);
  });

  it("an answer's stream closed early after an event id is resumed with Last-Event-ID", async () => {
    const s = await serve((req, _body, res) => {
      if (req.method === "POST") {
        return void res.writeHead(200, { "content-type": "text/event-stream" }).end(
          "id: e1\nretry: 20\ndata:\n\n",
        );
      }
      assert.equal(req.headers["last-event-id"], "e1");
      res.writeHead(200, { "content-type": "text/event-stream" }).end(
        `id: e2\nevent: message\ndata: ${answer(7)}\n\n`,
      );
    });
    closers.push(s.close);
    const { l, got } = link(s.url);
    assert.deepEqual(await l.post(request(7), 7), { kind: "answered" });
    assert.equal(got.length, 1);
    assert.deepEqual(s.seen, ["POST - -", "GET - e1"]);
    await l.close();
  });

  it("refusals and failures, by status and error code", async () => {
    const s = await serve((_req, body, res) => {
      const m = JSON.parse(body);
      const status = m.id;
      if (status === 404) return void res.writeHead(404).end();
      if (status === 413) {
        return void res.writeHead(413, { "content-type": "application/json" })
          .end(
            JSON.stringify({
              jsonrpc: "2.0",
              id: null,
              error: { code: -32600, message: "Request body over 4194304 bytes" },
            }),
          );
      }
      if (status === 200) {
        return void res.writeHead(200, { "content-type": "text/event-stream", "mcp-session-id": "S" }).end();
      }
      if (status === 5031) {
        // the service's own limit on open requests: the session is fine, the request was not taken
        return void res.writeHead(503, { "content-type": "application/json", "retry-after": "2" })
          .end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: SERVICE_BUSY, message: "busy" } }));
      }
      res.writeHead(status, { "content-type": "application/json" })
        .end(
          JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message: `status ${status}` } }),
        );
    });
    closers.push(s.close);
    const { l } = link(s.url);
    assert.deepEqual(await l.post(request(401), 401), {
      kind: "refused",
      refusal: { status: 401, detail: "status 401" },
    });
    assert.deepEqual(await l.post(request(413), 413), {
      kind: "rejected",
      status: 413,
      code: -32600,
      message: "Request body over 4194304 bytes",
    });
    assert.deepEqual(await l.post(request(500), 500), {
      kind: "failed",
      delivered: true,
      why: "HTTP 500: status 500",
    });
    // draining (or a balancer with no replica up): answered before anything ran
    assert.deepEqual(await l.post(request(503), 503), {
      kind: "failed",
      delivered: false,
      why: "HTTP 503: status 503",
    });
    assert.deepEqual(await l.post(request(5031), 5031), {
      kind: "busy",
      retryMs: 2000,
      why: "HTTP 503: busy",
    });
    // a stream that ends without the answer (and without an event id to resume from)
    const ended = await l.post(request(200), 200);
    assert.equal(ended.kind === "failed" && ended.delivered, true);
    assert.equal(l.sessionId, "S");
    assert.deepEqual(
      await l.post(request(404), 404),
      { kind: "session-gone" },
      "404 with a session: it is gone",
    );
    await l.close();

    const port = await new Promise<number>((resolve) => {
      const n = createNetServer().listen(0, "127.0.0.1", () => {
        const p = (n.address() as { port: number }).port;
        n.close(() => resolve(p));
      });
    });
    const nobody = link(`http://127.0.0.1:${port}/mcp`);
    const r = await nobody.l.post(request(1), 1);
    assert.equal(r.kind, "failed");
    // Deno's fetch gives no error code for a refused connection: only the binary's runtime can tell
    if (typeof (globalThis as { Bun?: unknown }).Bun !== "undefined") {
      assert.equal(r.kind === "failed" && r.delivered, false, "never reached: safe to send again");
    }
  });
});

describe("ServiceLink: is the session still there?", () => {
  it("asks the session itself (a GET with its id): 404 or a refused token is gone; 409 and 503 are there", async () => {
    let status = 409;
    const s = await serve((req, body, res) => {
      if (req.method === "POST") {
        const m = JSON.parse(body);
        return void res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "S1" })
          .end(answer(m.id));
      }
      res.writeHead(status).end();
    });
    try {
      const { l } = link(s.url);
      assert.equal(await l.sessionAlive(), false, "no session yet: nothing to ask about");
      await l.post(request(1, "initialize"), 1);
      for (
        const [code, alive] of [[409, true], [503, true], [404, false], [401, false], [403, false]] as const
      ) {
        status = code;
        assert.equal(await l.sessionAlive(), alive, `HTTP ${code}`);
      }
      assert.ok(
        s.seen.filter((x) => x.startsWith("GET S1 ")).length >= 5,
        "each probe carried the session id",
      );
      await l.close();
      assert.equal(await l.sessionAlive(), false, "a closed link has no session to ask about");
    } finally {
      s.close();
    }
  });
});
