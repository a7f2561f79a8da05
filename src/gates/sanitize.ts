/**
 * Gate 4, result sanitization, applied to every result, resource and error that reaches a host:
 * hidden characters stripped per Unicode class (unicode.ts: TAG characters, bidi controls,
 * zero-width characters, soft hyphens, selector runs; emoji flag and ZWJ sequences and the bidi
 * marks right-to-left text needs are kept), protocol-reserved `_meta` keys dropped,
 * credential-like text and a URL's `user:password@` redacted in errors, sizes capped. Pure: a
 * value in, a cleaned copy out.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { stripHidden } from "./unicode.ts";

export { stripHidden } from "./unicode.ts";

/** Hermes's hard cap on text (`_MCP_HARD_RESULT_CAP_CHARS`): head 40 %, tail 60 %. */
export const MAX_TEXT_CHARS = 2_000_000;
/** Binary payloads (base64) larger than this are replaced by a notice. */
export const MAX_BLOB_CHARS = 50 * 1024 * 1024;

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

/**
 * Hermes's `_CREDENTIAL_PATTERN`, plus common cloud and chat tokens. Each alternative must start a
 * word (`disk-full` and `monkey=1` are not credentials; `api_key=…` and `"sk-…"` are).
 */
const CREDENTIAL_PATTERN = new RegExp(
  String.raw`(?<![A-Za-z0-9])(?:` + [
    String.raw`ghp_[A-Za-z0-9_]{1,255}`,
    String.raw`gh[ousr]_[A-Za-z0-9_]{20,255}`,
    String.raw`github_pat_[A-Za-z0-9_]{20,255}`,
    String.raw`sk-[A-Za-z0-9_-](?:\.?[A-Za-z0-9_-]){0,254}`,
    String.raw`Bearer\s+\S+`,
    String.raw`(?:token|key|API_KEY|password|secret)=[^\s&,;"']{1,255}`,
    String.raw`AKIA[0-9A-Z]{16}`,
    String.raw`xox[abprs]-[A-Za-z0-9-]{10,255}`,
  ].join("|") + ")",
  "gi",
);

/** The userinfo of a URL (`scheme://user:password@host`, or a long token alone before `@`). */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)(?:[^\s/?#@:]*:[^\s/?#@]*|[^\s/?#@:]{16,})@/gi;

export function redactCredentials(s: string): string {
  return s.replace(URL_USERINFO, "$1[REDACTED]@").replace(CREDENTIAL_PATTERN, "[REDACTED]");
}

export function capText(s: string, max = MAX_TEXT_CHARS): string {
  if (s.length <= max) return s;
  const head = Math.floor(max * 0.4);
  const tail = max - head;
  return `${s.slice(0, head)}\n[… ${s.length - max} characters removed by hermit …]\n${s.slice(-tail)}`;
}

/**
 * Hidden characters stripped from every string inside a JSON-like value. With `filterMeta` every
 * `_meta` on the way is filtered too (and dropped when nothing is left); without it a `_meta` key
 * is data like any other (inside `structuredContent`, which must still match the tool's output
 * schema).
 */
function cleanDeep<T>(v: T, filterMetas: boolean): T {
  if (typeof v === "string") return stripHidden(v) as T;
  if (Array.isArray(v)) return v.map((x) => cleanDeep(x, filterMetas)) as T;
  if (v && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      if (k !== "_meta" || !filterMetas) out[k] = cleanDeep(x, filterMetas);
      else {
        const meta = filterMeta(x);
        if (meta) out[k] = cleanDeep(meta, true);
      }
    }
    return out as T;
  }
  return v;
}

/**
 * Any other value from an upstream (prompt results, resource and prompt lists, sampling results):
 * hidden characters stripped from every string, every `_meta` on the way filtered (and dropped when
 * nothing is left).
 */
export function sanitizeValue<T>(v: T): T {
  return cleanDeep(v, true);
}

type Block = Record<string, unknown>;

function cleanBlock(block: Block, isError: boolean): Block {
  const b: Block = {};
  for (const [key, value] of Object.entries(block)) {
    if (key === "_meta" || key === "resource") continue;
    if ((key === "data" || key === "blob") && typeof value === "string") {
      if (value.length > MAX_BLOB_CHARS) {
        const notice = `[${
          block.type ?? "content"
        } of ${value.length} base64 characters dropped by hermit: over the size cap]`;
        // resource contents keep their uri (an embedded resource or a resources/read item)
        return "uri" in block
          ? { uri: block.uri, mimeType: "text/plain", text: notice }
          : { type: "text", text: notice };
      }
      b[key] = value;
    } else b[key] = cleanDeep(value, false);
  }
  if (typeof b.text === "string") b.text = capText(isError ? redactCredentials(b.text) : b.text);
  if (block.resource && typeof block.resource === "object") {
    b.resource = cleanBlock(block.resource as Block, isError);
  }
  const meta = filterMeta(block._meta);
  if (meta) b._meta = meta;
  return b;
}

export function sanitizeResult(result: CallToolResult): CallToolResult {
  const isError = result.isError === true;
  const content = (result.content ?? []).map((c) => cleanBlock(c as Block, isError));
  const out: CallToolResult = { ...result, content: content as CallToolResult["content"] };
  if (result.structuredContent !== undefined) {
    const structured = cleanDeep(result.structuredContent, false);
    const size = JSON.stringify(structured).length;
    if (size > MAX_TEXT_CHARS) {
      delete out.structuredContent;
      out.content = [...out.content, {
        type: "text",
        text: `[structured content of ${size} characters dropped by hermit: over the size cap]`,
      }];
    } else out.structuredContent = structured;
  }
  delete out._meta;
  const meta = filterMeta(result._meta);
  if (meta) out._meta = meta;
  return out;
}

/** Resource contents (`resources/read`): the same treatment as result blocks. */
export function sanitizeContents<T extends { contents: unknown[]; _meta?: unknown }>(r: T): T {
  const out = { ...r, contents: r.contents.map((c) => cleanBlock(c as Block, false)) };
  delete out._meta;
  const meta = filterMeta(r._meta);
  if (meta) out._meta = meta;
  return out;
}

/** An error message on its way to a host: no credentials, no hidden characters, at most 4000 characters. */
export function sanitizeErrorMessage(message: string): string {
  return capText(redactCredentials(stripHidden(message)), 4000);
}
