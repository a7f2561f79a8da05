/**
 * Gate 4 for a content block's binary payload (an image's or audio's `data`, a resource's `blob`):
 * under the size cap, base64 as RFC 4648 writes it (MIME's line-wrapped form taken unwrapped),
 * and of the type its `mimeType` says (`media_type.ts`). Pure.
 */
import { mediaMismatch } from "./media_type.ts";

/** Binary payloads (base64) larger than this are replaced by a notice. */
export const MAX_BLOB_CHARS = 50 * 1024 * 1024;

const NOT_BASE64 = /[^A-Za-z0-9+/=]/;
/** MIME's wrapping (RFC 2045, Python's `encodebytes`): lines of base64, each ended by one break. */
const WRAPPED_BASE64 = /^(?:[A-Za-z0-9+/=]+\r?\n)*[A-Za-z0-9+/=]*$/;

/**
 * Base64 as RFC 4648 writes it, what `data` and `blob` are: its alphabet, padding optional but only
 * at the end (about 15 ms for 10 MB; an anchored pattern is 5 times slower in V8); MIME's
 * line-wrapped form is taken unwrapped. The base64 to pass on, or undefined when it is none.
 */
function base64Of(s: string): string | undefined {
  if (NOT_BASE64.test(s)) {
    if (!WRAPPED_BASE64.test(s)) return undefined;
    s = s.replace(/\r?\n/g, "");
  }
  const pad = s.indexOf("=");
  const ok = pad < 0 ? s.length % 4 !== 1 : s.length % 4 === 0 && pad >= s.length - 2 && s.endsWith("=");
  return ok ? s : undefined;
}

/**
 * A block's `data` or `blob` to pass on (with the `mimeType` its bytes have, where its label names
 * another type of the same kind), or why not (over the cap, not base64, not its `mimeType`).
 */
export function payloadOf(
  key: string,
  value: string,
  mimeType: unknown,
): { ok: string; mimeType?: string } | { refused: string } {
  if (value.length > MAX_BLOB_CHARS) {
    return { refused: `of ${value.length} base64 characters dropped by hermit: over the size cap` };
  }
  const b64 = base64Of(value);
  if (b64 === undefined) return { refused: `dropped by hermit: its ${key} is not base64` };
  const media = mediaMismatch(key, b64, mimeType);
  if (media && "refused" in media) return { refused: `dropped by hermit: ${media.refused}` };
  return { ok: b64, mimeType: media?.relabel };
}
