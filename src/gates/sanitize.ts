/**
 * Gate 4, result sanitization, applied to every result, resource, error, notification and request
 * that reaches a host from an upstream: hidden characters stripped per Unicode class from every
 * string and object key (unicode.ts: TAG characters, bidi controls, zero-width characters, soft
 * hyphens, selector runs; emoji flag and ZWJ sequences and the bidi marks right-to-left text needs
 * are kept), protocol-reserved and hermit's own `_meta` keys dropped, credential-like text and a
 * URL's `user:password@` redacted in every string of an error (`redact.ts`), every string and key
 * capped at 2,000,000 characters; binaries passed only as base64 under 50 MiB of the type their
 * `mimeType` says (`payload.ts`). Pure: a value in, a cleaned copy out.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { stripHidden } from "./unicode.ts";
import { redactCredentials } from "./redact.ts";
import { payloadOf } from "./payload.ts";

export { stripHidden } from "./unicode.ts";
export { MAX_BLOB_CHARS } from "./payload.ts";

/** Hermes's hard cap on text (`_MCP_HARD_RESULT_CAP_CHARS`): head 40 %, tail 60 %. */
export const MAX_TEXT_CHARS = 2_000_000;

/**
 * A `_meta` key is reserved for MCP when its prefix (before `/`) is, in either of the spec's
 * wordings: a label `modelcontextprotocol` or `mcp` followed by at least one more label (2025-06-18:
 * `modelcontextprotocol.io/`, `tools.mcp.com/`), or a `modelcontextprotocol` or `mcp` second label
 * (the reverse-DNS wording since: `io.modelcontextprotocol/`, `dev.mcp/`, `com.mcp.tools/`).
 * `com.example.mcp/` is reserved by neither. Labels compare case-insensitively, as DNS labels do.
 */
export function isReservedMetaKey(key: string): boolean {
  const slash = key.indexOf("/");
  if (slash < 0) return false;
  const labels = key.slice(0, slash).toLowerCase().split(".");
  const mcp = (l: string | undefined) => l === "modelcontextprotocol" || l === "mcp";
  return mcp(labels[1]) || labels.some((l, i) => i < labels.length - 1 && mcp(l));
}

/** hermit's own `_meta` prefix (e.g. `dev.hermit/refused`): an upstream must not be able to forge it. */
export const HERMIT_META_PREFIX = "dev.hermit/";

/** `_meta` without reserved keys and without hermit's own; undefined when nothing is left. */
export function filterMeta(meta: unknown): Record<string, unknown> | undefined {
  if (!meta || typeof meta !== "object" || Array.isArray(meta)) return undefined;
  const kept = Object.entries(meta as Record<string, unknown>).filter(([k]) =>
    !isReservedMetaKey(k) && !k.toLowerCase().startsWith(HERMIT_META_PREFIX)
  );
  return kept.length ? Object.fromEntries(kept) : undefined;
}

export function capText(s: string, max = MAX_TEXT_CHARS): string {
  if (s.length <= max) return s;
  const head = Math.floor(max * 0.4);
  const tail = max - head;
  return `${s.slice(0, head)}\n[… ${s.length - max} characters removed by hermit …]\n${s.slice(-tail)}`;
}

/** What a string (a value or a key) becomes on its way to a host. */
type Clean = (s: string) => string;

/** In an error result every string is also redacted: credentials hide in any field. */
const cleanInError: Clean = (s) => redactCredentials(stripHidden(s));

/**
 * The one place a string (a value or a key) is cleaned: then capped at `MAX_TEXT_CHARS`, so no
 * field — a block's text, a link's description, a `_meta` value, a prompt's message — is larger.
 */
function cleanString(s: string, clean: Clean): string {
  return capText(clean(s));
}

/**
 * The entries of an object with their keys cleaned. A key with hidden characters never takes the
 * place of the same key without them (`isError` + TAG cannot override `isError`).
 */
function cleanKeys(o: object, clean: Clean): [string, unknown][] {
  return Object.entries(o).flatMap(([raw, x]): [string, unknown][] => {
    const key = cleanString(raw, clean);
    return key !== raw && Object.hasOwn(o, key) ? [] : [[key, x]];
  });
}

/** A value nested deeper than this is dropped: no real result nests so deep, and hosts fail on it. */
export const MAX_RESULT_DEPTH = 1000;
export const TOO_DEEP = `[value nested deeper than ${MAX_RESULT_DEPTH} levels dropped by hermit]`;

/** An array or object being cleaned: its entries, how many are done, and what they became. */
interface Frame {
  entries: [string, unknown][];
  next: number;
  out: [string, unknown][];
  array: boolean;
  /** A `_meta` being cleaned (`filterMetas`): filtered once done, dropped when nothing is left. */
  meta: boolean;
}

/**
 * Every string inside a JSON-like value cleaned and capped, keys included, and `cut` when something
 * was nested deeper than `MAX_RESULT_DEPTH` (replaced by `TOO_DEEP`). With `filterMetas` every
 * `_meta` on the way is filtered too (and dropped when nothing is left); without it a `_meta` key
 * is data like any other (inside `structuredContent`, which must still match the tool's output
 * schema). With `blocks` an image or audio block or resource contents with a blob, wherever it
 * stands (a prompt's message, a sampling request), is cleaned as a result's block is (`cleanBlock`:
 * its payload checked, not cut as text). Iterative, so depth is no risk. Objects are built with
 * `Object.fromEntries`, so a `__proto__` key stays a plain key.
 */
function cleanWalk<T>(
  root: T,
  filterMetas: boolean,
  clean: Clean,
  blocks = false,
): { value: T; cut: boolean } {
  const stack: Frame[] = [];
  let cut = false;
  let done: unknown;
  /** `v` cleaned into `done`, or its frame pushed when it has entries to clean first. */
  const open = (v: unknown, meta: boolean): boolean => {
    if (typeof v === "string") done = cleanString(v, clean);
    else if (meta && (!v || typeof v !== "object" || Array.isArray(v))) done = undefined;
    else if (!v || typeof v !== "object") done = v;
    // a `_meta` must be an object: one too deep is dropped
    else if (stack.length >= MAX_RESULT_DEPTH) [done, cut] = [meta ? undefined : TOO_DEEP, true];
    else {
      const array = Array.isArray(v);
      const entries = array ? v.map((x, i): [string, unknown] => [String(i), x]) : cleanKeys(v, clean);
      // cleanBlock walks its fields without `blocks`: one level of it, whatever the depth; a
      // `_meta` shaped like a block is still a `_meta` (filtered)
      if (blocks && !array && !meta && carriesPayload(entries, clean)) done = cleanBlock(v as Block, clean);
      else {
        stack.push({ entries, next: 0, out: [], array, meta });
        return true;
      }
    }
    return false;
  };
  const put = (f: Frame, key: string, value: unknown, meta: boolean) => {
    if (!meta || value !== undefined) f.out.push([key, value]);
  };
  if (!open(root, false)) return { value: done as T, cut };
  while (true) {
    const f = stack[stack.length - 1];
    if (f.next < f.entries.length) {
      const [key, x] = f.entries[f.next++];
      const meta = filterMetas && !f.array && key === "_meta";
      if (!open(x, meta)) put(f, key, done, meta);
      continue;
    }
    stack.pop();
    const built = f.array ? f.out.map(([, x]) => x) : Object.fromEntries(f.out);
    const value = f.meta ? filterMeta(built) : built;
    const parent = stack[stack.length - 1];
    if (!parent) return { value: value as T, cut };
    put(parent, parent.entries[parent.next - 1][0], value, f.meta);
  }
}

function cleanDeep<T>(v: T, filterMetas: boolean, clean: Clean = stripHidden): T {
  return cleanWalk(v, filterMetas, clean).value;
}

/**
 * An upstream's `_meta`, keys and values cleaned, then filtered (`filterMeta`: a key that is
 * reserved or hermit's own once its hidden characters are gone is dropped too); undefined when
 * nothing is left.
 */
function cleanMeta(meta: unknown, clean: Clean): Record<string, unknown> | undefined {
  if (!meta || typeof meta !== "object" || Array.isArray(meta)) return undefined;
  return filterMeta(cleanDeep(meta, true, clean));
}

/**
 * Any other value from an upstream (prompt results, resource and prompt lists, progress, sampling
 * and elicitation requests and results): hidden characters stripped from every string and key,
 * every `_meta` on the way filtered (and dropped when nothing is left), the content blocks in it
 * cleaned as a result's are.
 */
export function sanitizeValue<T>(v: T): T {
  return cleanWalk(v, true, stripHidden, true).value;
}

type Block = Record<string, unknown>;

/** An image or audio block (a string `data`) or resource contents (a string `blob`), keys cleaned. */
function carriesPayload(entries: [string, unknown][], clean: Clean): boolean {
  const f = new Map(entries);
  const type = f.get("type");
  const media = typeof type === "string" && ["image", "audio"].includes(clean(type));
  return (media && typeof f.get("data") === "string") || (f.has("uri") && typeof f.get("blob") === "string");
}

/**
 * The fields of `o` other than `handled` (compared once cleaned, so a look-alike of a handled
 * field is dropped), cleaned as any value is.
 */
function otherFields(o: object, handled: string[], clean: Clean): Record<string, unknown> {
  const rest = Object.entries(o).filter(([k]) => !handled.includes(clean(k)));
  return cleanDeep(Object.fromEntries(rest), true, clean);
}

/**
 * A content block or resource contents: `data` and `blob` passed on as they are when they are
 * base64 under the cap, of the type `mimeType` says (media_type.ts; another image or audio type's
 * bytes get their own label), the whole block replaced by a notice when not; an embedded `resource` cleaned as resource contents (once: a resource inside
 * it is data).
 */
function cleanBlock(block: Block, clean: Clean, embedded = false): Block {
  const b: [string, unknown][] = [];
  const fields = cleanKeys(block, clean);
  const mimeType = cleanDeep(fields.find(([k]) => k === "mimeType")?.[1], false, clean);
  let relabel: string | undefined;
  for (const [key, value] of fields) {
    if (key === "_meta") continue;
    if ((key === "data" || key === "blob") && typeof value === "string") {
      const payload = payloadOf(key, value, mimeType);
      if ("refused" in payload) {
        const kind = typeof block.type === "string" ? cleanString(block.type, clean) : "content";
        const notice = `[${kind} ${payload.refused}]`;
        // resource contents keep their uri (an embedded resource or a resources/read item)
        return "uri" in block
          ? { uri: cleanDeep(block.uri, false, clean), mimeType: "text/plain", text: notice }
          : { type: "text", text: notice };
      }
      b.push([key, payload.ok]);
      if (payload.mimeType) relabel = payload.mimeType;
    } else if (
      key === "resource" && !embedded && value && typeof value === "object" && !Array.isArray(value)
    ) {
      b.push([key, cleanBlock(value as Block, clean, true)]);
    } else b.push([key, cleanDeep(value, false, clean)]);
  }
  const meta = cleanMeta(block._meta, clean);
  if (meta) b.push(["_meta", meta]);
  const out = Object.fromEntries(b);
  if (relabel) out.mimeType = relabel;
  return out;
}

/**
 * A tool result: every string and key cleaned — in an error result, credentials redacted in all of
 * them — blocks capped, `_meta` filtered at every level, fields the spec does not name cleaned too.
 */
export function sanitizeResult(result: CallToolResult): CallToolResult {
  const isError = result.isError === true;
  const clean = isError ? cleanInError : stripHidden;
  const out = otherFields(
    result,
    ["content", "structuredContent", "isError", "_meta"],
    clean,
  ) as CallToolResult;
  out.content = (result.content ?? []).map((c) => cleanBlock(c as Block, clean)) as CallToolResult["content"];
  if (result.isError !== undefined) out.isError = result.isError;
  if (result.structuredContent !== undefined) {
    const { value: structured, cut } = cleanWalk(result.structuredContent, false, clean);
    const size = cut ? 0 : JSON.stringify(structured).length;
    if (cut || size > MAX_TEXT_CHARS) {
      const what = cut
        ? `nested deeper than ${MAX_RESULT_DEPTH} levels dropped by hermit`
        : `of ${size} characters dropped by hermit: over the size cap`;
      out.content = [...out.content, { type: "text", text: `[structured content ${what}]` }];
    } else out.structuredContent = structured;
  }
  const meta = cleanMeta(result._meta, clean);
  if (meta) out._meta = meta;
  return out;
}

/** Resource contents (`resources/read`): the same treatment as result blocks. */
export function sanitizeContents<T extends { contents: unknown[]; _meta?: unknown }>(r: T): T {
  const out = otherFields(r, ["contents", "_meta"], stripHidden) as T;
  out.contents = r.contents.map((c) => cleanBlock(c as Block, stripHidden));
  const meta = cleanMeta(r._meta, stripHidden);
  if (meta) out._meta = meta;
  return out;
}

/** An error message on its way to a host: no credentials, no hidden characters, at most 4000 characters. */
export function sanitizeErrorMessage(message: string): string {
  return capText(redactCredentials(stripHidden(message)), 4000);
}
