/**
 * `src/platform/http1.ts` (the response parser, fed every way a stream of bytes can be split, and
 * the request head) and `src/platform/plain_fetch.ts` against real servers on loopback (node:http,
 * and raw sockets for what node:http will not send): answers whole or streamed, connections
 * reused and not, a stale connection's request sent once more, aborts and timeouts, and the error
 * codes the relay judges delivery by.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createNetServer, type Socket } from "node:net";
import path from "node:path";
import process from "node:process";
import { Http1Error, type ParseEvent, requestHead, ResponseParser } from "../../../src/platform/http1.ts";
import { IDLE_MS, plainFetch } from "../../../src/platform/plain_fetch.ts";
import { neverReached } from "../../../src/relay/link_outcomes.ts";
import { fetchFor } from "../../../src/service/endpoint.ts";
import { runtime } from "../../../src/platform/runtime.ts";

const bytes = (s: string) => new TextEncoder().encode(s);

/** Feed `text` in pieces cut at `cuts`; the head, the body as text, and how it ended. */
function parse(text: string, cuts: number[] = [], method = "POST", eof = false) {
  const p = new ResponseParser(method);
  const all = bytes(text);
  const events: ParseEvent[] = [];
  let at = 0;
  for (const cut of [...cuts, all.length]) {
    events.push(...p.push(all.subarray(at, cut)));
    at = cut;
  }
  if (eof) events.push(...p.eof());
  const head = events.find((e) => e.kind === "head");
  const body = Buffer.concat(events.flatMap((e) => e.kind === "data" ? [e.bytes] : [])).toString("utf8");
  const end = events.find((e) => e.kind === "end");
  const framing = head?.kind === "head" ? head.body : undefined;
  return { head: head?.kind === "head" ? head.head : undefined, body, end, done: p.done, framing };
}

describe("the HTTP/1.1 response parser", () => {
  const json = '{"ok":"grüße"}';
  const sized = `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${
    bytes(json).length
  }\r\n\r\n${json}`;
  const chunked = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" +
    "9;ext=1\r\ndata: a\r\n\r\n5\r\n\n\nb\r\n\r\n0\r\nx-trailer: t\r\n\r\n";

  it("a body framed by its length, split at every byte, comes out the same", () => {
    for (let cut = 0; cut <= bytes(sized).length; cut++) {
      const got = parse(sized, [cut]);
      assert.equal(got.body, '{"ok":"grüße"}', `cut at ${cut}`);
      assert.deepEqual(got.end, { kind: "end", reusable: true });
      assert.equal(got.head?.status, 200);
      assert.deepEqual(got.head?.headers[0], ["content-type", "application/json"], "names lower-cased");
    }
  });

  it("a chunked body with extensions and trailers, split at every two bytes", () => {
    for (let a = 0; a <= bytes(chunked).length; a++) {
      for (let b = a; b <= bytes(chunked).length; b += 7) {
        const got = parse(chunked, [a, b]);
        assert.equal(got.body, "data: a\r\n\n\nb\r\n", `cuts ${a}, ${b}`);
        assert.equal(got.done, true);
      }
    }
  });

  it("no body for HEAD, 204 and 304; an interim 100 is skipped; a body until close is not reusable", () => {
    assert.equal(parse("HTTP/1.1 200 OK\r\ncontent-length: 9\r\n\r\n", [], "HEAD").done, true);
    assert.equal(parse("HTTP/1.1 200 OK\r\ncontent-length: 9\r\n\r\n", [], "HEAD").framing, "none");
    assert.equal(parse("HTTP/1.1 204 No Content\r\n\r\n").framing, "none");
    assert.equal(
      parse("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").framing,
      "length",
      "empty, not absent",
    );
    assert.equal(parse("HTTP/1.1 204 No Content\r\n\r\n").done, true);
    assert.equal(parse("HTTP/1.1 304 Not Modified\r\ncontent-length: 3\r\n\r\n").done, true);
    const cont = parse("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n");
    assert.equal(cont.head?.status, 202);
    assert.equal(cont.head?.statusText, "Accepted");
    const untilClose = parse("HTTP/1.1 200 OK\r\n\r\nall of it", [5], "GET", true);
    assert.equal(untilClose.body, "all of it");
    assert.deepEqual(untilClose.end, { kind: "end", reusable: false });
  });

  it("a connection is kept only when the answer allows it and nothing follows it", () => {
    const reusable = (t: string) => (parse(t).end as { reusable: boolean }).reusable;
    assert.equal(reusable("HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"), false);
    assert.equal(reusable("HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n"), false);
    assert.equal(reusable("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\ncontent-length: 0\r\n\r\n"), true);
    assert.equal(reusable("HTTP/1.1 200\r\ncontent-length: 2\r\n\r\nokHTTP/1.1 200"), false, "bytes past it");
  });

  it("what breaks the grammar throws an Http1Error", () => {
    const bad = [
      "HTTP/2 200 OK\r\n\r\n",
      "HTTP/1.1 2000 OK\r\n\r\n",
      "ICY 200 OK\r\n\r\n",
      "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
      "HTTP/1.1 200 OK\r\nbad name: x\r\n\r\n",
      "HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\nabc",
      "HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n",
      "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n",
      "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nabX\r\n",
      `HTTP/1.1 200 OK\r\nx: ${"y".repeat(70_000)}`,
    ];
    for (const text of bad) assert.throws(() => parse(text), Http1Error, text.slice(0, 60));
    assert.throws(() => parse("HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nab", [], "POST", true), /cut off/);
    assert.throws(() => parse("", [], "POST", true), /closed before an answer/);
  });

  it("the request head: a length for a body, the caller's framing headers dropped, no header injection", () => {
    const url = new URL("http://127.0.0.1:8080/mcp?x=1");
    assert.equal(
      requestHead("POST", url, { accept: "a", Host: "evil", "Content-Length": "1" }, 12),
      "POST /mcp?x=1 HTTP/1.1\r\nhost: 127.0.0.1:8080\r\naccept: a\r\ncontent-length: 12\r\n\r\n",
    );
    assert.equal(
      requestHead("GET", url, {}, undefined),
      "GET /mcp?x=1 HTTP/1.1\r\nhost: 127.0.0.1:8080\r\n\r\n",
    );
    assert.throws(() => requestHead("GET", url, { a: "x\r\nb: y" }, undefined), TypeError);
    assert.throws(() => requestHead("GET", url, { a: "x\0" }, undefined), TypeError);
    assert.throws(() => requestHead("GET", url, { "a b": "x" }, undefined), TypeError);
  });
});

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

describe("plainFetch", () => {
  const closers: (() => void)[] = [];
  after(() => closers.forEach((c) => c()));

  async function http(handler: Handler) {
    const sockets = new Set<Socket>();
    let connections = 0;
    const server = createServer((req, res) => {
      let body = "";
      req.setEncoding("utf8").on("data", (d) => (body += d)).on("end", () => handler(req, body, res));
    });
    server.on("connection", (s) => (connections++, sockets.add(s), s.on("close", () => sockets.delete(s))));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    closers.push(() => (sockets.forEach((s) => s.destroy()), server.close()));
    const port = (server.address() as { port: number }).port;
    return { url: `http://127.0.0.1:${port}/mcp`, connections: () => connections, sockets };
  }

  /** A server that answers with `answer(request number on this connection, socket)`. */
  async function raw(answer: (n: number, sock: Socket) => void) {
    let connections = 0;
    const server = createNetServer((sock) => {
      connections++;
      let n = 0;
      let got = "";
      sock.setEncoding("utf8").on("data", (d) => {
        got += d;
        while (got.includes("\r\n\r\n")) {
          const end = got.indexOf("\r\n\r\n") + 4;
          const length = Number(/content-length: (\d+)/i.exec(got.slice(0, end))?.[1] ?? 0);
          if (got.length < end + length) return;
          got = got.slice(end + length);
          answer(++n, sock);
        }
      }).on("error", () => {});
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    closers.push(() => server.close());
    return {
      url: `http://127.0.0.1:${(server.address() as { port: number }).port}/`,
      connections: () => connections,
      server,
    };
  }

  it("a JSON answer, with status, headers and body; the connection kept for the next request", async () => {
    const s = await http((req, body, res) => {
      res.setHeader("set-cookie", ["a=1", "b=2"]);
      res.writeHead(201, "Made", { "content-type": "application/json", "mcp-session-id": "s1" });
      res.end(JSON.stringify({ method: req.method, body, auth: req.headers.authorization }));
    });
    for (let i = 0; i < 3; i++) {
      const res = await plainFetch(s.url, {
        method: "POST",
        headers: { authorization: "Bearer t" },
        body: "héllo",
      });
      assert.equal(res.status, 201);
      assert.equal(res.statusText, "Made");
      assert.equal(res.ok, true);
      assert.equal(res.headers.get("mcp-session-id"), "s1");
      assert.equal(res.headers.get("Set-Cookie"), "a=1, b=2", "repeated fields joined, as Headers does");
      assert.equal(res.headers.get("x-none"), null);
      assert.deepEqual(await res.json(), { method: "POST", body: "héllo", auth: "Bearer t" });
    }
    assert.equal(s.connections(), 1, "one connection for all three");
  });

  it("a streamed answer arrives event by event, before it ends; 204 has no body; a large body goes whole", async () => {
    let finish: () => void = () => {};
    const s = await http((req, body, res) => {
      if (req.method === "DELETE") return void res.writeHead(204).end();
      if (req.method === "PUT") return void res.writeHead(200).end(String(body.length));
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: one\n\n");
      finish = () => res.end("data: two\n\n");
    });
    const res = await plainFetch(s.url, { method: "GET" });
    const reader = res.body!.getReader();
    assert.equal(new TextDecoder().decode((await reader.read()).value), "data: one\n\n");
    finish();
    assert.equal(new TextDecoder().decode((await reader.read()).value), "data: two\n\n");
    assert.equal((await reader.read()).done, true);
    const none = await plainFetch(s.url, { method: "DELETE" });
    assert.equal(none.status, 204);
    assert.equal(none.body, null);
    const big = "x".repeat(8 * 1024 * 1024);
    assert.equal(await (await plainFetch(s.url, { method: "PUT", body: big })).text(), String(big.length));
  });

  it("a stream given up by its reader closes its connection; the next request gets a new one", async () => {
    const s = await http((req, _body, res) => {
      if (req.method === "GET") res.writeHead(200, { "content-type": "text/event-stream" }).write(": hi\n\n");
      else res.end("ok");
    });
    assert.equal(await (await plainFetch(s.url, { method: "POST", body: "{}" })).text(), "ok");
    const res = await plainFetch(s.url, { method: "GET" });
    const reader = res.body!.getReader();
    assert.equal(new TextDecoder().decode((await reader.read()).value), ": hi\n\n");
    await res.body!.cancel();
    assert.deepEqual(await reader.read(), { done: true });
    const deadline = Date.now() + 5000;
    while (s.sockets.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.equal(s.sockets.size, 0, "the connection the stream came on is closed");
    assert.equal(await (await plainFetch(s.url, { method: "POST", body: "{}" })).text(), "ok");
    assert.equal(s.connections(), 2);
  });

  it("an answer that comes before the whole request went out: that connection is not used again", async () => {
    // as a service refusing a body over its limit (413) from its length, without reading it
    let connections = 0;
    const server = createNetServer((sock) => {
      connections++;
      let got = "";
      const onData = (d: Buffer) => {
        got += d.toString("latin1");
        if (!got.includes("\r\n\r\n")) return;
        sock.off("data", onData);
        if (/^POST/.test(got)) {
          sock.pause(); // the rest of the body stays unread: the client's writes back up
          sock.write("HTTP/1.1 413 Payload Too Large\r\ncontent-length: 8\r\n\r\ntoo big!");
        } else sock.write("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
      };
      sock.on("data", onData).on("error", () => {});
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    closers.push(() => server.close());
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
    const refused = await plainFetch(url, { method: "POST", body: "x".repeat(32 * 1024 * 1024) });
    assert.equal(refused.status, 413);
    assert.equal(await refused.text(), "too big!");
    const next = await Promise.race([
      plainFetch(url, { method: "GET", signal: AbortSignal.timeout(5000) }).then((r) => r.text()),
      new Promise((r) =>
        setTimeout(() => r("no answer: the request went out behind the rest of a body"), 6000)
      ),
    ]);
    assert.equal(next, "ok");
    assert.equal(connections, 2);
  });

  it("nothing listening: ECONNREFUSED, which the relay counts as never delivered", async () => {
    const s = await http(() => {});
    closers.pop()!();
    await new Promise((r) => setTimeout(r, 50));
    const err = await plainFetch(s.url, { method: "POST", body: "{}" }).catch((e) => e);
    assert.equal(err.code, "ECONNREFUSED");
    assert.equal(neverReached(err), true);
  });

  it("a connection that dies during the answer: ECONNRESET, which may have been delivered", async () => {
    const s = await raw((_n, sock) => {
      sock.write("HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nonly part");
      setTimeout(() => sock.destroy(), 20);
    });
    const res = await plainFetch(s.url, { method: "POST", body: "{}" }).catch((e) => e);
    assert.equal(res.code, "ECONNRESET");
    assert.equal(neverReached(res), false);
  });

  it("a kept connection closed before an answer: a GET goes once more on a new one", async () => {
    const s = await raw((n, sock) => {
      if (n === 1) sock.write("HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nfirst");
      else sock.destroy(); // as a server that timed the idle connection out just as the request came
    });
    assert.equal(await (await plainFetch(s.url, { method: "GET" })).text(), "first");
    assert.equal(await (await plainFetch(s.url, { method: "GET" })).text(), "first");
    assert.equal(s.connections(), 2);
  });

  it("a POST whose kept connection closes before an answer is not sent again: it may have run", async () => {
    // a TCP balancer closes the connection when the replica running the call dies; a second try
    // would reach another replica, and a "not taken" there would hide that the first may have run
    let requests = 0;
    const s = await raw((n, sock) => {
      requests++;
      if (n === 1) sock.write("HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nfirst");
      else setTimeout(() => sock.destroy(), 30); // read, ran a while, and died
    });
    assert.equal(await (await plainFetch(s.url, { method: "POST", body: "{}" })).text(), "first");
    const err = await plainFetch(s.url, { method: "POST", body: "{}" }).catch((e) => e);
    assert.equal(err.code, "ECONNRESET");
    assert.equal(neverReached(err), false, "the call may have run: the host must not be told it did not");
    assert.equal(requests, 2, "sent once each, never again");
    assert.equal(s.connections(), 1);
  });

  it("a service gone after reading on a kept connection: possibly delivered, never 'refused'", async () => {
    const s = await raw((n, sock) => {
      if (n === 1) return void sock.write("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
      s.server.close(); // it read the request, then went away: the second try finds nobody listening
      sock.destroy();
    });
    await (await plainFetch(s.url, { method: "POST", body: "{}" })).text();
    const err = await plainFetch(s.url, { method: "POST", body: "{}" }).catch((e) => e);
    assert.equal(err.code, "ECONNRESET");
    assert.equal(neverReached(err), false, "the call may have run: the host must not be told it did not");
  });

  it("answers that end the connection (close, HTTP/1.0, bytes past the answer) are not reused", async () => {
    const answers = [
      "HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 1\r\n\r\na",
      "HTTP/1.0 200 OK\r\ncontent-length: 1\r\n\r\nb",
      "HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\ncJUNK",
      "HTTP/1.1 200 OK\r\n\r\nd",
    ];
    let i = 0;
    const s = await raw((_n, sock) => {
      sock.write(answers[i++]);
      if (i === 4) sock.end();
    });
    const got = [];
    for (let k = 0; k < 4; k++) got.push(await (await plainFetch(s.url, { method: "GET" })).text());
    assert.deepEqual(got, ["a", "b", "c", "d"]);
    assert.equal(s.connections(), 4);
  });

  it("an abort before the answer or during a stream, and a timeout, end the request and its connection", async () => {
    const s = await http((req, _body, res) => {
      if (req.url?.includes("stream")) {
        res.writeHead(200, { "content-type": "text/event-stream" }).write(":\n\n");
      }
      // otherwise never answer
    });
    const ctl = new AbortController();
    const waiting = plainFetch(s.url, { method: "POST", body: "{}", signal: ctl.signal });
    setTimeout(() => ctl.abort(), 30);
    assert.equal((await waiting.catch((e) => e)).name, "AbortError");
    const timeout = await plainFetch(s.url, { method: "GET", signal: AbortSignal.timeout(50) }).catch((e) =>
      e
    );
    assert.equal(timeout.name, "TimeoutError");
    const ctl2 = new AbortController();
    const res = await plainFetch(`${s.url}?stream`, { method: "GET", signal: ctl2.signal });
    const reader = res.body!.getReader();
    await reader.read();
    ctl2.abort();
    assert.equal((await reader.read().catch((e) => e)).name, "AbortError");
    const deadline = Date.now() + 5000;
    while (s.sockets.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.equal(s.sockets.size, 0, "every connection of an aborted request is closed");
    const pre = new AbortController();
    pre.abort();
    assert.equal(
      (await plainFetch(s.url, { method: "GET", signal: pre.signal }).catch((e) => e)).name,
      "AbortError",
    );
  });

  it("an idle kept connection does not keep the process alive", async () => {
    const s = await http((_req, _body, res) => res.end("ok"));
    const script = path.join(import.meta.dirname!, "..", "..", "..", "src", "platform", "plain_fetch.ts");
    const code = `import { plainFetch } from ${JSON.stringify(script)};
      console.log(await (await plainFetch(${JSON.stringify(s.url)}, { method: "GET" })).text());`;
    const args = runtime === "deno" ? ["eval", "--ext=ts", code] : ["-e", code];
    // the server runs in this process: the child is waited for without blocking it
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (out += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (out += d));
    const killer = setTimeout(() => process.kill(child.pid!, "SIGKILL"), 20_000);
    const [status, signal] = await new Promise<[number | null, string | null]>((r) =>
      child.on("exit", (c, sig) => r([c, sig]))
    );
    clearTimeout(killer);
    assert.equal(out.trim(), "ok");
    assert.deepEqual([status, signal], [0, null], "it exited by itself, with the connection still idle");
    assert.ok(IDLE_MS < 30_000, "well inside the service's idle timeout");
  });

  it("is what hermit uses for http:// on a loopback name; the runtime's fetch elsewhere (https, proxies)", () => {
    for (
      const url of [
        "http://127.0.0.1:4000/mcp",
        "http://localhost:1/",
        "http://[::1]:8/mcp",
        "http://127.9.0.1/",
      ]
    ) {
      assert.equal(fetchFor(url), plainFetch, url);
    }
    for (
      const url of ["https://127.0.0.1:4000/mcp", "http://10.0.0.2/mcp", "http://example.com/", "not a url"]
    ) {
      assert.equal(fetchFor(url), fetch, url);
    }
  });
});
