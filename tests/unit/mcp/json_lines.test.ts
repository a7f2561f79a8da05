/**
 * Reading newline-delimited JSON-RPC with bounds (src/mcp/json_lines.ts): any chunking gives the
 * same messages, each bad line is one event (never the end of the stream), an oversize line is
 * skipped keeping only its head and tail and is named by the id at either end; and an upstream's
 * stderr line without an end is cut, not kept (a real child process).
 */
import assert from "node:assert/strict";
import process from "node:process";
import { describe, it } from "node:test";
import fc from "fast-check";
import { classifyLine, idOfTruncated, JsonLineReader, type LineEvent } from "../../../src/mcp/json_lines.ts";
import { GroupStdioTransport, MAX_STDERR_LINE } from "../../../src/mcp/stdio_transport.ts";
import { waitFor } from "../../helpers/procs.ts";

const lines = [
  '{"jsonrpc":"2.0","id":1,"method":"ping"}',
  "not json",
  '{"jsonrpc":"2.0","id":"a","result":{"x":"é ✓ \\u0000"}}',
  "[]",
  '{"jsonrpc":"2.0","method":"notifications/initialized"}\r',
  "",
  "42",
];

function feed(reader: JsonLineReader, text: string, cuts: number[]): LineEvent[] {
  const bytes = Buffer.from(text);
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: LineEvent[] = [];
  let last = 0;
  for (const c of [...at, bytes.length]) {
    out.push(...reader.push(bytes.subarray(last, c)));
    last = c;
  }
  return out;
}

describe("JsonLineReader", () => {
  it("gives the same events whatever the chunking (UTF-8 split mid-character included)", () => {
    const text = lines.join("\n") + "\n";
    const whole = new JsonLineReader(1024).push(Buffer.from(text));
    assert.deepEqual(whole.map((e) => e.kind), [
      "message",
      "unparsable",
      "message",
      "invalid",
      "message",
      "invalid",
    ]);
    fc.assert(fc.property(fc.array(fc.nat(), { maxLength: 30 }), (cuts) => {
      assert.deepEqual(feed(new JsonLineReader(1024), text, cuts), whole);
    }));
  });

  it("skips an oversize line to its end, naming it by the id at its head or its tail, and reads on", () => {
    const r = new JsonLineReader(1000);
    const big = "x".repeat(5000);
    const head = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"t":"${big}"}}`;
    const tail = `{"method":"tools/call","params":{"t":"${big}"},"jsonrpc":"2.0","id":"q-8"}`;
    const response = `{"result":{"content":[{"type":"text","text":"${big}","id":3}]},"jsonrpc":"2.0","id":9}`;
    const events = feed(
      r,
      [head, tail, response, '{"jsonrpc":"2.0","id":10,"method":"ping"}'].join("\n") + "\n",
      [
        10,
        999,
        1001,
        6000,
      ],
    );
    assert.deepEqual(events.slice(0, 3), [
      { kind: "oversize", bytes: Buffer.byteLength(head), id: 7, method: "tools/call" },
      { kind: "oversize", bytes: Buffer.byteLength(tail), id: "q-8", method: "tools/call" },
      { kind: "oversize", bytes: Buffer.byteLength(response), id: 9 },
    ]);
    assert.deepEqual(events[3], { kind: "message", message: { jsonrpc: "2.0", id: 10, method: "ping" } });
    assert.ok(r.buffered === 0);
  });

  it("holds at most the limit for a line that never ends", () => {
    const r = new JsonLineReader(64 * 1024);
    const chunk = Buffer.alloc(64 * 1024, "x");
    for (let i = 0; i < 200; i++) assert.deepEqual(r.push(chunk), []);
    assert.ok(r.buffered <= 8192, `${r.buffered} bytes held`);
    assert.deepEqual(r.push(Buffer.from("\n")), [{ kind: "oversize", bytes: 200 * 64 * 1024, id: null }]);
  });

  it("a nested id is never taken for the message's own", () => {
    assert.deepEqual(idOfTruncated('{"result":{"id":5,"x":"', 'abc"}}'), { id: null });
    assert.deepEqual(idOfTruncated('{"result":{"x":"', '"items":[{"id":3}]},"jsonrpc":"2.0"}'), { id: null });
    assert.deepEqual(idOfTruncated('{ "id" : "a\\"b", "method": "x"', "}"), { id: 'a"b', method: "x" });
  });

  it("says what is wrong with JSON that is not a JSON-RPC 2.0 message", () => {
    const detail = (l: string) => (classifyLine(l) as { detail: string }).detail;
    assert.equal(detail("[]"), "an empty array is not a request");
    assert.equal(detail("null"), "a JSON null is not a request");
    assert.equal(detail('"hi"'), "a JSON string is not a request");
    assert.equal(detail('{"jsonrpc":"1.0","id":1,"method":"x"}'), '"jsonrpc" must be "2.0", not "1.0"');
    assert.equal(detail('{"jsonrpc":"2.0","id":1,"method":5}'), '"method" must be a string');
    assert.equal(detail('{"jsonrpc":"2.0"}'), "neither a request, a notification nor a response");
    assert.deepEqual(classifyLine('{"jsonrpc":"2.0","id":4,"result":5}'), {
      kind: "invalid",
      id: 4,
      isResponse: true,
      detail: "not a valid JSON-RPC 2.0 message",
    });
  });
});

describe("an upstream's stderr", { skip: process.platform === "win32" && "POSIX processes" }, () => {
  it("a line without an end is cut at MAX_STDERR_LINE, the rest counted; the next line whole", async () => {
    const t = new GroupStdioTransport({
      command: process.execPath.includes("deno") || process.execPath.includes("bun")
        ? "node"
        : process.execPath,
      args: [
        "-e",
        "process.stderr.write('e'.repeat(5*1024*1024)); process.stderr.write('\\nshort line\\n'); setTimeout(()=>{},60000)",
      ],
      env: { PATH: process.env.PATH ?? "" },
    });
    const seen: string[] = [];
    t.onStderrLine = (l) => seen.push(l);
    await t.start();
    try {
      await waitFor(() => seen.length === 2, { timeoutMs: 30_000, what: "two stderr lines" });
      assert.equal(
        seen[0],
        `${"e".repeat(MAX_STDERR_LINE)} […${5 * 1024 * 1024 - MAX_STDERR_LINE} more characters]`,
      );
      assert.equal(seen[1], "short line");
    } finally {
      await t.close();
    }
  });
});
