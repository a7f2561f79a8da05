/**
 * Gate 4, an image's or audio's bytes against its `mimeType`: the magic bytes of the common types
 * (PNG, JPEG, GIF, WebP; WAV, MP3, Ogg, FLAC, M4A) read from a short decoded prefix of the base64.
 * A PNG labelled `image/jpeg` makes a provider refuse the host's next model call for the whole
 * conversation: the label is corrected to what the bytes are (many servers call every image
 * `image/png`). Bytes of no known type under a checked label (text labelled `image/png`), or an
 * audio file labelled as an image, are refused. A type without a reliable signature (SVG, AAC,
 * WebM, …) is not checked. Pure; about a microsecond a payload.
 */

/** Bytes at an offset, each compared under its `mask` (all bits when there is none). */
type Signature = { at: number; bytes: number[]; mask?: number[] };

const ascii = (s: string, at = 0): Signature => ({ at, bytes: [...s].map((c) => c.charCodeAt(0)) });
const RIFF = (form: string) => [ascii("RIFF"), ascii(form, 8)];

/** Each known type: every one of the signatures of one of its alternatives must match. */
const KNOWN: Record<string, { name: string; mime: string; alternatives: Signature[][] }> = {};
/** A type's names; the first is the one a corrected label gets. */
function known(types: string[], name: string, ...alternatives: Signature[][]): void {
  for (const t of types) KNOWN[t] = { name, mime: types[0], alternatives };
}
known(["image/png"], "PNG", [{ at: 0, bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] }]);
known(["image/jpeg", "image/jpg", "image/pjpeg"], "JPEG", [{ at: 0, bytes: [0xff, 0xd8, 0xff] }]);
known(["image/gif"], "GIF", [ascii("GIF87a")], [ascii("GIF89a")]);
known(["image/webp"], "WebP", RIFF("WEBP"));
known(["audio/wav", "audio/wave", "audio/x-wav", "audio/vnd.wave"], "WAV", RIFF("WAVE"));
known(["audio/ogg", "audio/opus", "audio/vorbis"], "Ogg", [ascii("OggS")]);
known(["audio/flac", "audio/x-flac"], "FLAC", [ascii("fLaC")]);
known(["audio/mp4", "audio/m4a", "audio/x-m4a"], "M4A", [ascii("ftyp", 4)]);
// an MP3 starts with an ID3 tag or a frame's sync (11 bits set)
known(["audio/mpeg", "audio/mp3", "audio/mpeg3", "audio/x-mpeg-3"], "MP3", [ascii("ID3")], [
  { at: 0, bytes: [0xff, 0xe0], mask: [0xff, 0xe0] },
]);

/** Enough base64 for the longest signature (12 bytes). */
const PREFIX_CHARS = 16;

function matches(head: Uint8Array, sigs: Signature[]): boolean {
  return sigs.every(({ at, bytes, mask }) =>
    head.length >= at + bytes.length && bytes.every((b, i) => (head[at + i] & (mask?.[i] ?? 0xff)) === b)
  );
}

function isType(head: Uint8Array, type: { alternatives: Signature[][] }): boolean {
  return type.alternatives.some((sigs) => matches(head, sigs));
}

/** The first bytes of valid base64 (`base64`: already checked to be). */
function headOf(base64: string): Uint8Array {
  const bin = atob(base64.slice(0, base64.length > PREFIX_CHARS ? PREFIX_CHARS : undefined));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

/**
 * A payload against its `mimeType`: undefined when it is that type, or the type is not one
 * checked; `relabel` when it is another known type of the same kind (an image, audio); `refused`
 * (`its data is not the image/png its mimeType says`) otherwise.
 */
export function mediaMismatch(
  key: string,
  base64: string,
  mimeType: unknown,
): { relabel: string } | { refused: string } | undefined {
  if (typeof mimeType !== "string") return undefined;
  const claimed = mimeType.split(";")[0].trim().toLowerCase();
  const type = KNOWN[claimed];
  if (!type) return undefined;
  const head = headOf(base64);
  if (isType(head, type)) return undefined;
  const actual = Object.values(KNOWN).find((t) => isType(head, t));
  const kind = (mime: string) => mime.slice(0, mime.indexOf("/"));
  if (actual && kind(actual.mime) === kind(claimed)) return { relabel: actual.mime };
  const what = actual ? `is ${actual.name}, not` : "is not";
  return { refused: `its ${key} ${what} the ${claimed} its mimeType says` };
}
