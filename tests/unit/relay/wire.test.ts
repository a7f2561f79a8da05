/**
 * What the lean relay reads and writes without the MCP SDK: server-sent events in any chunking,
 * JSON-RPC messages classified once (and the SDK's own codes and protocol versions, which the
 * relay repeats so as not to load the SDK), host lines split without re-joining long ones, and a
 * connection that was never made told apart from one that broke, by error codes alone.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  ErrorCode,
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";
import { LineSplitter } from "../../../src/relay/io.ts";
import { classify, errorLine, idInHead, parseMessage, RpcCode } from "../../../src/relay/jsonrpc.ts";
import { neverReached } from "../../../src/relay/link_outcomes.ts";
import { SseDecoder, type SseEvent } from "../../../src/relay/sse.ts";
import * as warm from "../../../src/relay/warm.ts";

describe("SseDecoder", () => {
  const stream = 'event: message\r\nid: 7\r\ndata: {"a":1}\r\n\r\n: keep-alive\n\nid: 8\nretry: 1500\n\n' +
    "data: line one\ndata: line two\n\n";

  it("decodes the same events however the text is cut", () => {
    const whole = new SseDecoder().push(stream);
    assert.deepEqual(whole.map((e) => [e.event, e.data, e.id, e.retry, e.hasData]), [
      ["message", '{"a":1}', "7", undefined, true],
      ["message", "", "8", 1500, false],
      ["message", "line one\nline two", "8", undefined, true],
    ]);
    for (let size = 1; size <= 7; size++) {
      const d = new SseDecoder();
      const got: SseEvent[] = [];
      for (let i = 0; i < stream.length; i += size) got.push(...d.push(stream.slice(i, i + size)));
      assert.deepEqual(got, whole, `chunks of ${size}`);
      assert.equal(d.lastEventId, "8");
    }
  });

  it("a CR alone ends a line too, and a lone CRLF split across chunks is one line end", () => {
    const d = new SseDecoder();
    assert.deepEqual(d.push("data: x\r"), []);
    assert.deepEqual(d.push("\n\r\n").map((e) => e.data), ["x"]);
    assert.deepEqual(new SseDecoder().push("data: y\r\r").map((e) => e.data), ["y"]);
  });
});

describe("JSON-RPC messages", () => {
  it("kinds, with the text kept as written", () => {
    const req = '{"jsonrpc":"2.0","id":1,"method":"tools/list"}';
    assert.deepEqual(
      [
        req,
        '{"jsonrpc":"2.0","method":"notifications/initialized"}',
        '{"jsonrpc":"2.0","id":"a","result":{}}',
      ]
        .map((t) => {
          const m = parseMessage(t);
          return [m.kind, "text" in m && m.text === t];
        }),
      [["request", true], ["notification", true], ["response", true]],
    );
    assert.equal(parseMessage('{"jsonrpc":"2.0","id":"1","method":"x"}').kind, "request");
  });

  it("invalid input is answered as JSON-RPC says: -32700 for not JSON, -32600 for not a message", () => {
    const codes = [
      "this is not json",
      "[]",
      "42",
      '{"jsonrpc":"1.0","id":3,"method":"x"}',
      '{"jsonrpc":"2.0","id":4}',
    ]
      .map((t) => parseMessage(t)).map((m) => m.kind === "invalid" ? [m.code, m.id] : m.kind);
    assert.deepEqual(codes, [[-32700, null], [-32600, null], [-32600, null], [-32600, 3], [-32600, 4]]);
    assert.equal(
      errorLine(null, -32700, "x"),
      '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}',
    );
  });

  it("a message that holds a newline is re-serialized (a line stays a line)", () => {
    const m = classify(
      { jsonrpc: "2.0", method: "x", params: { s: "a\nb" } },
      '{"jsonrpc":"2.0",\n"method":"x"}',
    );
    assert.equal(m.kind === "notification" && m.text.includes("\n"), false);
  });

  it("the id of a skipped line, from its first characters", () => {
    assert.equal(idInHead('{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"x":"'), 42);
    assert.equal(idInHead('{"id" : "a\\"b","method"'), 'a"b');
    assert.equal(idInHead('{"method":"x","params":{"data":"'), null);
  });

  it("the codes and protocol versions the relay repeats are the MCP SDK's", () => {
    assert.equal(RpcCode.ParseError, ErrorCode.ParseError);
    assert.equal(RpcCode.InvalidRequest, ErrorCode.InvalidRequest);
    assert.equal(RpcCode.InternalError, ErrorCode.InternalError);
    assert.equal(RpcCode.ConnectionClosed, ErrorCode.ConnectionClosed);
    assert.equal(warm.LATEST_PROTOCOL_VERSION, LATEST_PROTOCOL_VERSION);
    assert.deepEqual(warm.SUPPORTED_PROTOCOL_VERSIONS, SUPPORTED_PROTOCOL_VERSIONS);
  });
});

describe("LineSplitter", () => {
  it("lines in order across chunks; CRLF and blank lines; a last line without a newline", () => {
    const lines: string[] = [];
    const s = new LineSplitter({ onLine: (l) => lines.push(l), onOversize: () => assert.fail() }, 100);
    for (const chunk of ["a", "b\r\n\n", "c\nd", "e"]) s.push(chunk);
    s.end();
    assert.deepEqual(lines, ["ab", "c", "de"]);
  });

  it("a line over the limit is reported once with its head and skipped; the next line is whole", () => {
    const lines: string[] = [];
    const heads: string[] = [];
    const s = new LineSplitter({ onLine: (l) => lines.push(l), onOversize: (h) => heads.push(h) }, 10);
    s.push('{"id":5,');
    s.push('"x":"0123456789"');
    s.push("more more}\nnext\n");
    assert.deepEqual(heads.length, 1);
    assert.match(heads[0], /^\{"id":5,/);
    assert.deepEqual(lines, ["next"]);
  });
});

describe("neverReached", () => {
  it("a refused connection (by code, in the error or its cause) never arrived; a reset or an abort may have", () => {
    const refused = Object.assign(new Error("Unable to connect"), { code: "ConnectionRefused" });
    assert.equal(neverReached(refused), true);
    assert.equal(neverReached(new TypeError("fetch failed", { cause: { code: "ECONNREFUSED" } })), true);
    assert.equal(neverReached(Object.assign(new Error("x"), { name: "ConnectionRefused" })), true);
    assert.equal(neverReached(Object.assign(new Error("socket hang up"), { code: "ECONNRESET" })), false);
    assert.equal(neverReached(new DOMException("aborted", "AbortError")), false);
    // the words alone do not count: only codes do
    assert.equal(neverReached(new Error("connect ECONNREFUSED 127.0.0.1:1")), false);
  });
});
