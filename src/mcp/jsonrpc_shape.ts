/**
 * What a JSON-RPC 2.0 message is, decided by hand: exactly the SDK's `JSONRPCMessageSchema`
 * (request, notification, result or error; the same strict top level, integer ids within the safe
 * range, `_meta` checked where the SDK checks it) and the same value out, without zod. Every
 * message a host or an upstream sends passes here, and the SDK's zod parse cost a session more
 * CPU per call than all of hermit's gates (a third of a serve's time per call went to zod, most
 * of it to this one question; profiled). `callToolParamsValid` is the same for the params of
 * `tools/call`, the one request that is hot. Pure; `tests/unit/mcp/jsonrpc_shape.test.ts` holds
 * both to the SDK's schemas, case by case and on generated messages. Also the looser shape the
 * service's HTTP side routes by (`isMessage`: request, notification or response; its parameters
 * are the handler's to validate).
 */
import type { JSONRPCMessage, JSONRPCRequest, RequestId } from "@modelcontextprotocol/sdk/types.js";

type Obj = Record<string, unknown>;

const RELATED_TASK = "io.modelcontextprotocol/related-task";

/** An object as zod's `z.object` takes one: anything but null, an array or a primitive. */
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** As zod's `z.record` takes one: a plain object (its prototype Object's, or none). */
function isPlainObject(v: unknown): v is Obj {
  if (!isObject(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** `z.number().int()` in zod 4: an integer within the safe range. */
const isInt = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v);

/** A request id or progress token: a string or a safe integer. */
const isId = (v: unknown): v is string | number => typeof v === "string" || isInt(v);

/** Only `allowed` keys (the strict top level: a key that is present but undefined counts too). */
function onlyKeys(o: Obj, allowed: readonly string[]): boolean {
  for (const k in o) if (!allowed.includes(k)) return false;
  return true;
}

/** A loose object as zod gives it back: an own `__proto__` key is not copied. */
function loose(o: Obj): Obj {
  if (!Object.hasOwn(o, "__proto__")) return o;
  const copy = { ...o };
  delete copy["__proto__"];
  return copy;
}

/**
 * `_meta` of params or a result: a loose object whose `progressToken` is an id and whose related
 * task is `{ taskId: string }` (its other keys dropped, as zod drops them). undefined: not valid.
 */
function meta(m: unknown): { ok: boolean; value?: unknown } {
  if (m === undefined) return { ok: true, value: m };
  if (!isObject(m)) return { ok: false };
  if (m.progressToken !== undefined && !isId(m.progressToken)) return { ok: false };
  const related = m[RELATED_TASK];
  if (related === undefined) return { ok: true, value: loose(m) };
  if (!isObject(related) || typeof related.taskId !== "string") return { ok: false };
  return { ok: true, value: { ...loose(m), [RELATED_TASK]: { taskId: related.taskId } } };
}

/** Params of a request or notification, or a result: an object with a valid `_meta`, or undefined. */
function withMeta(p: unknown, optional: boolean): { ok: boolean; value?: unknown } {
  if (p === undefined) return { ok: optional, value: p };
  if (!isObject(p)) return { ok: false };
  if (!("_meta" in p)) return { ok: true, value: loose(p) };
  const m = meta(p._meta);
  if (!m.ok) return { ok: false };
  return { ok: true, value: m.value === p._meta ? loose(p) : { ...loose(p), _meta: m.value } };
}

const REQUEST_KEYS = ["jsonrpc", "id", "method", "params"] as const;
const NOTIFICATION_KEYS = ["jsonrpc", "method", "params"] as const;
const RESULT_KEYS = ["jsonrpc", "id", "result"] as const;
const ERROR_KEYS = ["jsonrpc", "id", "error"] as const;

/** `value` as a JSON-RPC message (what the SDK's schema gives), or undefined when it is none. */
export function asJsonRpcMessage(value: unknown): JSONRPCMessage | undefined {
  if (!isObject(value) || value.jsonrpc !== "2.0") return undefined;
  const v = value;
  if (typeof v.method === "string") {
    const params = withMeta(v.params, true);
    if (!params.ok) return undefined;
    const out: Obj = { jsonrpc: "2.0" };
    if (isId(v.id) && onlyKeys(v, REQUEST_KEYS)) out.id = v.id;
    else if (!onlyKeys(v, NOTIFICATION_KEYS)) return undefined;
    out.method = v.method;
    if ("params" in v) out.params = params.value;
    return out as JSONRPCMessage;
  }
  if ("result" in v) {
    if (!isId(v.id) || !onlyKeys(v, RESULT_KEYS)) return undefined;
    const result = withMeta(v.result, false);
    return result.ok ? { jsonrpc: "2.0", id: v.id, result: result.value } as JSONRPCMessage : undefined;
  }
  const e = v.error;
  if (!isObject(e) || !isInt(e.code) || typeof e.message !== "string") return undefined;
  if ((v.id !== undefined && !isId(v.id)) || !onlyKeys(v, ERROR_KEYS)) return undefined;
  const error: Obj = { code: e.code, message: e.message };
  if ("data" in e) error.data = e.data;
  const out: Obj = { jsonrpc: "2.0" };
  if ("id" in v) out.id = v.id;
  out.error = error;
  return out as JSONRPCMessage;
}

/** A request (an id and a method) by the SDK's rules: `isJSONRPCRequest`, without zod. */
export function isRequestShape(
  value: unknown,
): value is { id: string | number; method: string; params?: Obj } {
  const m = asJsonRpcMessage(value);
  return m !== undefined && "method" in m && "id" in m;
}

/**
 * Do these params fit `tools/call` as the SDK's `CallToolRequestSchema` has them? true only where
 * they certainly do (a name, plain-object arguments, a valid `_meta`, a `task` with a numeric ttl);
 * false sends the caller to the schema for the verdict and its words.
 */
export function callToolParamsValid(params: unknown): boolean {
  if (!isObject(params) || typeof params.name !== "string") return false;
  if (params.arguments !== undefined && !isPlainObject(params.arguments)) return false;
  if (!meta(params._meta).ok) return false;
  const task = params.task;
  if (task === undefined) return true;
  return isObject(task) &&
    (task.ttl === undefined || (typeof task.ttl === "number" && Number.isFinite(task.ttl)));
}

/**
 * Does `result` certainly fit `CallToolResultSchema`, and would the schema give it back unchanged?
 * true only for the common shape: a plain object of at most `content` (text blocks of exactly
 * `type` and `text`), `structuredContent` (a plain object without an own `__proto__` key, which
 * zod's copy would lose) and a boolean `isError`; anything else (images, annotations, `_meta`,
 * other keys) is the schema's to decide.
 */
export function callToolResultCertain(result: unknown): boolean {
  if (!isPlainObject(result) || !onlyKeys(result, RESULT_FIELDS) || !Array.isArray(result.content)) {
    return false;
  }
  for (const c of result.content) {
    if (!isPlainObject(c) || c.type !== "text" || typeof c.text !== "string" || !onlyKeys(c, TEXT_FIELDS)) {
      return false;
    }
  }
  const sc = result.structuredContent;
  if (sc !== undefined && (!isPlainObject(sc) || Object.hasOwn(sc, "__proto__"))) return false;
  return result.isError === undefined || typeof result.isError === "boolean";
}

const RESULT_FIELDS = ["content", "structuredContent", "isError"] as const;
const TEXT_FIELDS = ["type", "text"] as const;

/** Routing only (the service's HTTP side): a request, a notification or a response, loosely. */
export function isMessage(m: unknown): m is JSONRPCMessage {
  if (!isObject(m) || m.jsonrpc !== "2.0") return false;
  const anyInt = (id: unknown): id is RequestId =>
    typeof id === "string" || (typeof id === "number" && Number.isInteger(id));
  if (typeof m.method === "string") {
    return (m.params === undefined || isObject(m.params)) && (!("id" in m) || anyInt(m.id));
  }
  if (!anyInt(m.id)) return false;
  return "result" in m
    ? typeof m.result === "object" && m.result !== null
    : typeof m.error === "object" && m.error !== null;
}

export const isRequest = (m: JSONRPCMessage): m is JSONRPCRequest => "method" in m && "id" in m;

export const isResponse = (m: JSONRPCMessage): m is JSONRPCMessage & { id: RequestId } =>
  !("method" in m) && "id" in m;
