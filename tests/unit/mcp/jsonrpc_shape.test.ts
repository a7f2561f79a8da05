/**
 * The hand-written JSON-RPC shape (src/mcp/jsonrpc_shape.ts) against the SDK's own zod schemas:
 * the same verdict and the same value out, on chosen edge cases and on generated messages built
 * the way they arrive (JSON text parsed), `__proto__` keys, unsafe integers and strict top-level
 * keys included; `callToolParamsValid` never says yes where the SDK's schema says no; and
 * `callToolResultCertain` never vouches for a result the schema refuses or would give back changed.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  JSONRPCMessageSchema,
} from "@modelcontextprotocol/sdk/types.js";
import {
  asJsonRpcMessage,
  callToolParamsValid,
  callToolResultCertain,
  isRequestShape,
} from "../../../src/mcp/jsonrpc_shape.ts";

/** Both verdicts on one value: the same success, and deep-equal values when it is one. */
function same(value: unknown, label = JSON.stringify(value)): void {
  const zod = JSONRPCMessageSchema.safeParse(value);
  const mine = asJsonRpcMessage(value);
  assert.equal(mine !== undefined, zod.success, `verdict differs on ${label}`);
  if (zod.success) assert.deepStrictEqual(mine, zod.data, `value differs on ${label}`);
}

const related = "io.modelcontextprotocol/related-task";

const CASES: string[] = [
  '{"jsonrpc":"2.0","id":1,"method":"ping"}',
  '{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x","arguments":{"a":1}}}',
  '{"jsonrpc":"2.0","method":"notifications/initialized"}',
  '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}',
  '{"jsonrpc":"2.0","id":1,"result":{}}',
  '{"jsonrpc":"2.0","id":1,"result":{"content":[],"_meta":{"progressToken":"t","x":1}}}',
  '{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no","data":{"x":1}}}',
  '{"jsonrpc":"2.0","error":{"code":-32700,"message":"parse"}}',
  '{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","extra":true,"stack":"s"}}',
  '{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}',
  '{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"m"}}',
  '{"jsonrpc":"2.0","id":1,"error":[]}',
  '{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}',
  '{"jsonrpc":"2.0","id":9007199254740992,"method":"x"}',
  '{"jsonrpc":"2.0","id":9007199254740991,"method":"x"}',
  '{"jsonrpc":"2.0","id":-0,"method":"x"}',
  '{"jsonrpc":"2.0","id":1.5,"method":"x"}',
  '{"jsonrpc":"2.0","id":1e300,"result":{}}',
  '{"jsonrpc":"2.0","id":null,"method":"x"}',
  '{"jsonrpc":"1.0","id":1,"method":"x"}',
  '{"id":1,"method":"x"}',
  '{"jsonrpc":"2.0","id":1,"method":5}',
  '{"jsonrpc":"2.0","id":1,"method":5,"result":{}}',
  '{"jsonrpc":"2.0","id":1,"method":"x","params":[]}',
  '{"jsonrpc":"2.0","id":1,"method":"x","params":null}',
  '{"jsonrpc":"2.0","id":1,"method":"x","params":"s"}',
  '{"jsonrpc":"2.0","id":1,"method":"x","extra":1}',
  '{"jsonrpc":"2.0","method":"x","extra":1}',
  '{"jsonrpc":"2.0","id":1,"method":"x","__proto__":{}}',
  '{"jsonrpc":"2.0","id":1,"method":"x","params":{"__proto__":{"a":1},"b":2}}',
  '{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"__proto__":{"a":1},"progressToken":2}}}',
  '{"jsonrpc":"2.0","id":1,"result":{"__proto__":[],"x":1}}',
  '{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":[]}}',
  '{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":null}}',
  '{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"progressToken":1.5}}}',
  '{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"progressToken":null}}}',
  `{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"${related}":{"taskId":"t","x":1},"y":2}}}`,
  `{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"${related}":{"taskId":3}}}}`,
  `{"jsonrpc":"2.0","id":1,"result":{"_meta":{"${related}":{"taskId":"t","x":1}}}}`,
  `{"jsonrpc":"2.0","method":"n","params":{"_meta":{"${related}":null}}}`,
  '{"jsonrpc":"2.0","id":1,"result":[]}',
  '{"jsonrpc":"2.0","id":1,"result":null}',
  '{"jsonrpc":"2.0","result":{}}',
  "[]",
  "null",
  "42",
  '"2.0"',
];

/** JSON text of an object with these entries, in this order (`__proto__` as an own key). */
const objectText = (entries: [string, string][]) =>
  "{" + entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(",") + "}";

const scalar = fc.constantFrom(
  "1",
  "-3",
  "0",
  "1.5",
  "9007199254740992",
  '"a"',
  '"2.0"',
  "null",
  "true",
  "[]",
  "{}",
);
const meta = fc.array(
  fc.tuple(
    fc.constantFrom("progressToken", related, "x", "__proto__"),
    fc.oneof(scalar, fc.constant('{"taskId":"t"}')),
  ),
  { maxLength: 3 },
).map(objectText);
const params = fc.array(
  fc.tuple(fc.constantFrom("_meta", "name", "arguments", "__proto__", "y"), fc.oneof(scalar, meta)),
  { maxLength: 3 },
).map(objectText);
const error = fc.array(
  fc.tuple(
    fc.constantFrom("code", "message", "data", "z"),
    fc.oneof(scalar, fc.constant('"msg"'), fc.constant("-32600")),
  ),
  { maxLength: 4 },
).map(objectText);
/** An error object, nearly right. */
const nearError = fc.record({
  code: fc.constantFrom("-32600", "1", "1.5", '"x"'),
  message: fc.constantFrom('"msg"', "1"),
  more: fc.array(fc.tuple(fc.constantFrom("data", "stack", "__proto__"), scalar), { maxLength: 2 }),
}).map(({ code, message, more }) => objectText([["code", code], ["message", message], ...more]));
const anyKeys = fc.array(
  fc.tuple(
    fc.constantFrom("jsonrpc", "id", "method", "params", "result", "error", "__proto__", "other"),
    fc.oneof(scalar, fc.constant('"2.0"'), fc.constant('"tools/call"'), params, error),
  ),
  { maxLength: 5 },
);
/** A message of one kind, nearly right: its keys in any order, maybe one more, ids of every sort. */
const nearlyRight = fc.record({
  kind: fc.constantFrom("request", "notification", "result", "error"),
  id: fc.constantFrom("1", '"a"', "-7", "1.5", "null", "9007199254740992"),
  params: fc.option(params),
  body: fc.oneof(params, scalar, error, nearError),
  extra: fc.option(fc.tuple(fc.constantFrom("other", "__proto__", "id", "result", "method"), scalar)),
  order: fc.nat(),
}).map(({ kind, id, params, body, extra, order }) => {
  const entries: [string, string][] = [["jsonrpc", '"2.0"']];
  if (kind !== "notification" && !(kind === "error" && order % 3 === 0)) entries.push(["id", id]);
  if (kind === "request" || kind === "notification") {
    entries.push(["method", '"tools/call"']);
    if (params !== null) entries.push(["params", params]);
  } else entries.push([kind, body]);
  if (extra !== null && order % 2 === 0) entries.push(extra);
  const turned = order % entries.length;
  return [...entries.slice(turned), ...entries.slice(0, turned)];
});
const message = fc.oneof(anyKeys, nearlyRight).map(objectText);

/**
 * Run `check` (which asserts agreement wherever the hand check vouches, and says whether it did)
 * on 3000 generated texts; at least 20 must have been vouched for, or the agreement means little.
 */
function vouchesOftenAndRightly(
  texts: fc.Arbitrary<string>,
  what: string,
  check: (text: string) => boolean,
): void {
  let yes = 0;
  fc.assert(
    fc.property(texts, (text) => {
      if (check(text)) yes++;
    }),
    { numRuns: 3000 },
  );
  assert.ok(yes >= 20, `only ${yes} generated ${what} were vouched for`);
}

describe("asJsonRpcMessage", () => {
  it("agrees with the SDK's JSONRPCMessageSchema on every edge case, value included", () => {
    for (const text of CASES) same(JSON.parse(text), text);
  });

  it("agrees on present but undefined keys (only JavaScript makes them)", () => {
    same({ jsonrpc: "2.0", id: undefined, method: "x" }, "id: undefined beside a method");
    same({ jsonrpc: "2.0", id: undefined, error: { code: 1, message: "m" } }, "id: undefined in an error");
    same({ jsonrpc: "2.0", id: 1, method: "x", params: undefined }, "params: undefined");
    same({ jsonrpc: "2.0", id: 1, error: { code: 1, message: "m", data: undefined } }, "data: undefined");
  });

  it("agrees on generated messages, valid and not", () => {
    fc.assert(
      fc.property(message, (text) => {
        same(JSON.parse(text), text);
      }),
      { numRuns: 3000 },
    );
  });

  it("generates enough valid messages of each kind for the agreement to mean something", () => {
    const kinds = new Map<string, number>();
    fc.sample(message, { numRuns: 3000, seed: 7 }).forEach((text) => {
      const m = asJsonRpcMessage(JSON.parse(text));
      if (!m) return;
      const kind = "method" in m
        ? ("id" in m ? "request" : "notification")
        : "result" in m
        ? "result"
        : "error";
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    });
    for (const kind of ["request", "notification", "result", "error"]) {
      assert.ok((kinds.get(kind) ?? 0) >= 5, `only ${kinds.get(kind) ?? 0} generated ${kind}s`);
    }
  });

  it("isRequestShape is a request with an id", () => {
    assert.equal(isRequestShape({ jsonrpc: "2.0", id: 1, method: "x" }), true);
    assert.equal(isRequestShape({ jsonrpc: "2.0", method: "x" }), false);
    assert.equal(isRequestShape({ jsonrpc: "2.0", id: 1, result: {} }), false);
    assert.equal(isRequestShape({ jsonrpc: "2.0", id: 1, method: "x", params: [] }), false);
  });
});

describe("callToolParamsValid", () => {
  const sdkValid = (p: unknown) =>
    CallToolRequestSchema.safeParse({ method: "tools/call", params: p }).success;

  it("says yes to what calls look like", () => {
    for (
      const p of [
        { name: "echo" },
        { name: "echo", arguments: { message: "hi", n: [1, 2] } },
        { name: "echo", arguments: Object.create(null) },
        { name: "e", arguments: {}, _meta: { progressToken: "p" }, task: { ttl: 1000 } },
        { name: "e", other: 1, _meta: { [related]: { taskId: "t" } } },
      ]
    ) {
      assert.equal(callToolParamsValid(p), true, JSON.stringify(p));
      assert.equal(sdkValid(p), true, JSON.stringify(p));
    }
  });

  it("never says yes where the SDK's schema says no (generated params)", () => {
    const value = fc.oneof(
      scalar,
      meta,
      fc.constant('{"ttl":5}'),
      fc.constant('{"ttl":"5"}'),
      fc.constant('"echo"'),
    );
    const params = fc.array(
      fc.tuple(fc.constantFrom("name", "arguments", "_meta", "task", "__proto__", "x"), value),
      { maxLength: 4 },
    ).map(objectText);
    vouchesOftenAndRightly(fc.oneof(params, scalar), "params", (text) => {
      const p = JSON.parse(text);
      if (!callToolParamsValid(p)) return false;
      assert.equal(sdkValid(p), true, `fast path accepted ${text}`);
      return true;
    });
  });

  it("says no to a Date or an array as arguments, a string ttl, a fractional progress token", () => {
    for (
      const p of [
        { name: "e", arguments: new Date() },
        { name: "e", arguments: [] },
        { name: "e", task: { ttl: "5" } },
        { name: "e", task: null },
        { name: "e", _meta: { progressToken: 1.5 } },
        { arguments: {} },
      ]
    ) {
      assert.equal(callToolParamsValid(p), false);
      assert.equal(sdkValid(p), false);
    }
  });
});

describe("callToolResultCertain", () => {
  /** Where the hand check vouches, the schema agrees and gives back the same value as JSON. */
  function vouched(r: unknown, label: string): boolean {
    if (!callToolResultCertain(r)) return false;
    const z = CallToolResultSchema.safeParse(r);
    assert.equal(z.success, true, `vouched for what the schema refuses: ${label}`);
    // as JSON (key order aside, which JSON does not keep)
    const json = (v: unknown) => JSON.parse(JSON.stringify(v));
    assert.deepStrictEqual(json(z.data), json(r), `the schema changes ${label}`);
    return true;
  }

  it("vouches for what tool results look like", () => {
    for (
      const r of [
        { content: [] },
        { content: [{ type: "text", text: "hi" }] },
        { content: [{ type: "text", text: "a" }, { type: "text", text: "" }], isError: true },
        { content: [{ type: "text", text: "{}" }], structuredContent: { a: [1, { b: 2 }] } },
        { content: [], structuredContent: Object.create(null) },
      ]
    ) assert.equal(vouched(r, JSON.stringify(r)), true, JSON.stringify(r));
  });

  it("leaves to the schema what it cannot be sure of", () => {
    for (
      const text of [
        "{}",
        '{"content":[{"type":"image","data":"aGk=","mimeType":"image/png"}]}',
        '{"content":[{"type":"text","text":"a","annotations":{"priority":1}}]}',
        '{"content":[{"type":"text","text":"a","extra":1}]}',
        '{"content":[],"_meta":{"progressToken":1}}',
        '{"content":[],"other":1}',
        '{"content":[],"structuredContent":{"__proto__":{"a":1}}}',
        '{"content":[{"type":"text","text":"a","__proto__":{}}]}',
        '{"__proto__":{},"content":[]}',
        '{"content":[],"isError":"yes"}',
        '{"content":[],"structuredContent":[1]}',
        '{"content":[{"type":"text","text":5}]}',
        '{"content":"text"}',
      ]
    ) assert.equal(callToolResultCertain(JSON.parse(text)), false, text);
    assert.equal(callToolResultCertain({ content: [], structuredContent: new Date() }), false);
    assert.equal(callToolResultCertain([]), false);
  });

  it("never vouches for a result the schema refuses or changes (generated results)", () => {
    const value = fc.oneof(
      scalar,
      fc.constant('{"a":1}'),
      fc.constant('{"__proto__":{"a":1}}'),
      fc.constant('[{"type":"text","text":"t"}]'),
      fc.constant('[{"type":"text","text":"t"},{"type":"text","text":"u"}]'),
      fc.constant('[{"type":"text","text":1}]'),
      fc.constant('[{"type":"text","text":"t","x":1}]'),
      fc.constant('[{"type":"image","data":"aGk=","mimeType":"image/png"}]'),
      fc.constant("false"),
    );
    const result = fc.array(
      fc.tuple(fc.constantFrom("content", "structuredContent", "isError", "_meta", "__proto__", "x"), value),
      { maxLength: 4 },
    ).map(objectText);
    vouchesOftenAndRightly(result, "results", (text) => vouched(JSON.parse(text), text));
  });
});
