/**
 * Invisible characters, decided per Unicode class and in context, for gates 3 and 4. What is
 * hidden in a description is flagged by the scan; what is hidden in a result is stripped, except
 * the bidi marks, which right-to-left text needs:
 *
 *   class                      characters                           result      description
 *   TAG characters             U+E0000–E007F                        stripped    flagged
 *   bidi controls              U+202A–202E, U+2066–2069             stripped    flagged
 *   bidi marks                 U+200E, U+200F, U+061C               kept        flagged
 *   zero-width                 U+200B, U+2060–2064, U+FEFF, U+180E  stripped    flagged
 *   joiners                    U+200C (ZWNJ), U+200D (ZWJ)          stripped    flagged
 *   soft hyphen                U+00AD                               stripped    flagged
 *   variation selectors        U+FE00–FE0F, U+E0100–E01EF           stripped    flagged
 *   other default-ignorables   U+034F, U+115F, U+1160, U+17B4,      stripped    flagged
 *                              U+17B5, U+180B–180D, U+180F, U+2065,
 *                              U+206A–206F, U+3164, U+FFA0,
 *                              U+FFF0–FFF8, U+1BCA0–1BCA3,
 *                              U+1D173–1D17A, U+E0080–E00FF,
 *                              U+E01F0–E0FFF
 *   format characters          U+FFF9–FFFB (interlinear            stripped    flagged
 *   (not default-ignorable)    annotations), U+13430–1343F
 *                              (hieroglyph format controls)
 *
 * Together: Unicode's Default_Ignorable_Code_Point set, what a renderer may draw as nothing
 * (`DEFAULT_IGNORABLE`, the one list of it; the approval question escapes all of it), and the
 * format characters outside it that are drawn as nothing too (`HIDDEN_FORMAT`).
 * Not hidden, so neither stripped nor flagged: an RGI emoji tag sequence (the flags of England,
 * Scotland and Wales: 🏴 + tags + cancel tag; other tags after a black flag are hidden), a ZWJ
 * inside an emoji ZWJ sequence (👩‍💻), a joiner between two letters of a script that uses them
 * (Arabic and the other cursive joining scripts, as Persian does; the Brahmic ones, as Hindi does;
 * never Latin, Cyrillic or Greek), one variation selector right after a character (❤️; a
 * U+E0100–E01EF selector only after a Han ideograph; a Mongolian one only after a Mongolian
 * letter), a combining grapheme joiner before a combining mark, a Hangul filler that makes a
 * syllable with the jamo beside it, a hieroglyph format control after a hieroglyph. Runs of
 * selectors ("emoji smuggling") are hidden. Also the text the scan matches its phrasing against:
 * hidden characters removed, soft hyphens and joiners dropped wherever they stand, look-alikes
 * folded to ASCII (confusables.ts). Pure.
 */

import { foldChar } from "./confusables.ts";

export type HiddenClass =
  | "tag"
  | "bidi-control"
  | "bidi-mark"
  | "zero-width"
  | "joiner"
  | "soft-hyphen"
  | "selector"
  | "ignorable"
  | "format";

/** How the scan names each class (several classes share a name). */
export const HIDDEN_NAMES: Record<HiddenClass, string> = {
  tag: "Unicode TAG characters",
  "bidi-control": "bidirectional control characters",
  "bidi-mark": "bidirectional control characters",
  "zero-width": "zero-width characters",
  joiner: "zero-width characters",
  "soft-hyphen": "soft hyphens",
  selector: "variation selectors",
  ignorable: "default-ignorable characters",
  format: "invisible format characters",
};

/**
 * Unicode's Default_Ignorable_Code_Point set (DerivedCoreProperties.txt, Unicode 16, unchanged
 * since 14), as the inside of a `u` character class. Listed rather than `\p{…}`, so Deno and Bun
 * agree whatever Unicode version their engines carry.
 */
export const DEFAULT_IGNORABLE =
  "\\u00AD\\u034F\\u061C\\u115F\\u1160\\u17B4\\u17B5\\u180B-\\u180F\\u200B-\\u200F" +
  "\\u202A-\\u202E\\u2060-\\u206F\\u3164\\uFE00-\\uFE0F\\uFEFF\\uFFA0\\uFFF0-\\uFFF8\\u{1BCA0}-\\u{1BCA3}" +
  "\\u{1D173}-\\u{1D17A}\\u{E0000}-\\u{E0FFF}";

/**
 * Format characters (general category Cf) that are not default-ignorable but are drawn as nothing
 * all the same: the interlinear annotation anchor, separator and terminator (meant for use inside
 * one program, never interchanged), and the Egyptian hieroglyph format controls.
 */
export const HIDDEN_FORMAT = "\\uFFF9-\\uFFFB\\u{13430}-\\u{1343F}";

/** Any character that may be hidden somewhere (whether it is, depends on its neighbours). */
export const CANDIDATE = new RegExp(`[${DEFAULT_IGNORABLE}${HIDDEN_FORMAT}]`, "u");
export const CANDIDATES = new RegExp(CANDIDATE.source, "gu");
/**
 * The emoji tag sequences drawn as flags: Unicode's RGI set, England, Scotland, Wales (`gbeng`,
 * `gbsct`, `gbwls`). Any other black flag + tags + cancel tag is drawn as a bare black flag with
 * the tags invisible, and a model reads them as ASCII: a message smuggled behind a flag.
 */
const EMOJI_TAG_SEQUENCE =
  /\u{1F3F4}\u{E0067}\u{E0062}(?:\u{E0065}\u{E006E}\u{E0067}|\u{E0073}\u{E0063}\u{E0074}|\u{E0077}\u{E006C}\u{E0073})\u{E007F}/gu;
const PICTOGRAPH = /\p{Extended_Pictographic}/u;
const EMOJI_MODIFIER = /[\uFE0F\u{1F3FB}-\u{1F3FF}]/u;
const JOINED_LETTER = /[\p{L}\p{M}]/u;
/**
 * The scripts whose text uses ZWNJ and ZWJ between letters: the cursive joining scripts (Arabic
 * first: Persian, Urdu) and the Brahmic ones (Devanagari and its kin, Sinhala, Myanmar, Khmer).
 * By script extension, so a vowel mark shared by Arabic and Syriac counts. Not Latin, Cyrillic or
 * Greek: a joiner there only hides, and between look-alikes it splits a phrase (`ех\u200Cес(`).
 */
const JOINING_SCRIPTS = [
  "Arabic",
  "Syriac",
  "Nko",
  "Mongolian",
  "Mandaic",
  "Manichaean",
  "Psalter_Pahlavi",
  "Phags_Pa",
  "Adlam",
  "Hanifi_Rohingya",
  "Sogdian",
  "Devanagari",
  "Bengali",
  "Gurmukhi",
  "Gujarati",
  "Oriya",
  "Tamil",
  "Telugu",
  "Kannada",
  "Malayalam",
  "Sinhala",
  "Myanmar",
  "Khmer",
];
const JOINING_SCRIPT = new RegExp(
  `[${JOINING_SCRIPTS.map((s) => `\\p{Script_Extensions=${s}}`).join("")}]`,
  "u",
);
/** A letter or mark of a script that uses joiners. */
const joinsLetters = (c: string | undefined) => !!c && JOINED_LETTER.test(c) && JOINING_SCRIPT.test(c);
const HAN = /\p{Script=Han}/u;
const SELECTOR = /[\uFE00-\uFE0F\u{E0100}-\u{E01EF}]/u;
const MONGOLIAN_SELECTOR = /[\u180B-\u180D\u180F]/u;
const MONGOLIAN = /\p{Script=Mongolian}/u;
const MARK = /\p{M}/u;
const HIEROGLYPH = /\p{Script=Egyptian_Hieroglyphs}/u;
/** Conjoining jamo a Hangul filler makes a syllable with: a leading consonant, a vowel. */
const LEADING_JAMO = /[\u1100-\u115E\uA960-\uA97C]/u;
const VOWEL_JAMO = /[\u1161-\u11A7\uD7B0-\uD7C6]/u;

function classOf(cp: number): HiddenClass {
  if ((cp >= 0xFFF9 && cp <= 0xFFFB) || (cp >= 0x13430 && cp <= 0x1343F)) return "format";
  if (cp >= 0xE0000 && cp <= 0xE007F) return "tag";
  if ((cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069)) return "bidi-control";
  if (cp === 0x200E || cp === 0x200F || cp === 0x061C) return "bidi-mark";
  if (cp === 0x200C || cp === 0x200D) return "joiner";
  if (cp === 0x00AD) return "soft-hyphen";
  if ((cp >= 0xFE00 && cp <= 0xFE0F) || (cp >= 0xE0100 && cp <= 0xE01EF)) return "selector";
  if (cp === 0x180E || cp === 0xFEFF || (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x2060 && cp <= 0x2064)) {
    return "zero-width";
  }
  return "ignorable";
}

/** The code point before `index` and the one after the character at `index`. */
function neighbours(text: string, index: number, char: string): { prev?: string; next?: string } {
  const before = text.slice(Math.max(0, index - 2), index);
  const prev = before ? [...before].pop() : undefined;
  const next = text.slice(index + char.length).codePointAt(0);
  return { prev, next: next === undefined ? undefined : String.fromCodePoint(next) };
}

/** The code point before `index`, skipping emoji modifiers (FE0F, skin tones). */
function baseBefore(text: string, index: number): string | undefined {
  return [...text.slice(Math.max(0, index - 16), index)].reverse().find((c) => !EMOJI_MODIFIER.test(c));
}

function allowedInContext(
  text: string,
  index: number,
  char: string,
  cls: HiddenClass,
  flags: [number, number][],
): boolean {
  if (cls === "tag") return flags.some(([from, to]) => index >= from && index < to);
  const { prev, next } = neighbours(text, index, char);
  if (cls === "joiner") {
    if (char === "\u200D") {
      const base = baseBefore(text, index);
      if (base && next && PICTOGRAPH.test(base) && PICTOGRAPH.test(next)) return true;
    }
    return joinsLetters(prev) && joinsLetters(next);
  }
  if (cls === "selector") {
    if (!prev || SELECTOR.test(prev) || CANDIDATE.test(prev) || /\s/.test(prev)) return false;
    return char.codePointAt(0)! < 0xE0100 || HAN.test(prev);
  }
  // a hieroglyph format control after a hieroglyph (or another control) lays out a group
  if (cls === "format") return char.codePointAt(0)! >= 0x13430 && !!prev && HIEROGLYPH.test(prev);
  if (cls === "ignorable") {
    if (MONGOLIAN_SELECTOR.test(char)) return !!prev && MONGOLIAN.test(prev) && !CANDIDATE.test(prev);
    if (char === "\u034F") {
      return !!prev && !!next && JOINED_LETTER.test(prev) && MARK.test(next) && !CANDIDATE.test(prev) &&
        !CANDIDATE.test(next);
    }
    if (char === "\u115F") return !!next && VOWEL_JAMO.test(next);
    if (char === "\u1160") return !!prev && LEADING_JAMO.test(prev);
  }
  return false;
}

export interface HiddenChar {
  index: number;
  char: string;
  cls: HiddenClass;
}

/** Every character of `text` that is hidden where it stands. */
export function findHidden(text: string): HiddenChar[] {
  if (!CANDIDATE.test(text)) return [];
  const flags: [number, number][] = [...text.matchAll(EMOJI_TAG_SEQUENCE)].map((m) => [
    m.index!,
    m.index! + m[0].length,
  ]);
  const out: HiddenChar[] = [];
  for (const m of text.matchAll(CANDIDATES)) {
    const cls = classOf(m[0].codePointAt(0)!);
    if (!allowedInContext(text, m.index!, m[0], cls, flags)) out.push({ index: m.index!, char: m[0], cls });
  }
  return out;
}

/** `text` without the hidden characters a result must not carry (bidi marks stay). */
export function stripHidden(text: string): string {
  const hidden = findHidden(text).filter((h) => h.cls !== "bidi-mark");
  if (!hidden.length) return text;
  let out = "";
  let last = 0;
  for (const h of hidden) {
    out += text.slice(last, h.index);
    last = h.index + h.char.length;
  }
  return out + text.slice(last);
}

/** Dropped by the matching fold even where they are not hidden: the soft hyphen, ZWNJ and ZWJ. */
const FOLDED_AWAY = /^[\u00AD\u200C\u200D]$/u;

/**
 * The text phrasing rules are matched against, and for each of its characters the index of the
 * character it came from in `text` (so an excerpt shows what was really written).
 */
export function foldForMatching(text: string): { folded: string; origin: number[] } {
  const hidden = new Set(findHidden(text).map((h) => h.index));
  let folded = "";
  const origin: number[] = [];
  let i = 0;
  for (const c of text) {
    if (!hidden.has(i) && !FOLDED_AWAY.test(c)) {
      const mapped = foldChar(c);
      folded += mapped;
      for (let k = 0; k < mapped.length; k++) origin.push(i);
    }
    i += c.length;
  }
  return { folded, origin };
}
