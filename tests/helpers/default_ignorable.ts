/**
 * Unicode's Default_Ignorable_Code_Point set, copied range by range from DerivedCoreProperties.txt
 * (Unicode 16; unchanged since 14), for the gates' tests to check hermit's own list against: what
 * a renderer may draw as nothing.
 */
export const DEFAULT_IGNORABLE_RANGES: readonly [number, number][] = [
  [0x00AD, 0x00AD], // SOFT HYPHEN
  [0x034F, 0x034F], // COMBINING GRAPHEME JOINER
  [0x061C, 0x061C], // ARABIC LETTER MARK
  [0x115F, 0x1160], // HANGUL CHOSEONG FILLER..HANGUL JUNGSEONG FILLER
  [0x17B4, 0x17B5], // KHMER VOWEL INHERENT AQ..AA
  [0x180B, 0x180D], // MONGOLIAN FREE VARIATION SELECTOR ONE..THREE
  [0x180E, 0x180E], // MONGOLIAN VOWEL SEPARATOR
  [0x180F, 0x180F], // MONGOLIAN FREE VARIATION SELECTOR FOUR
  [0x200B, 0x200F], // ZERO WIDTH SPACE..RIGHT-TO-LEFT MARK
  [0x202A, 0x202E], // LEFT-TO-RIGHT EMBEDDING..RIGHT-TO-LEFT OVERRIDE
  [0x2060, 0x2064], // WORD JOINER..INVISIBLE PLUS
  [0x2065, 0x2065], // <reserved>
  [0x2066, 0x206F], // LEFT-TO-RIGHT ISOLATE..NOMINAL DIGIT SHAPES
  [0x3164, 0x3164], // HANGUL FILLER
  [0xFE00, 0xFE0F], // VARIATION SELECTOR-1..16
  [0xFEFF, 0xFEFF], // ZERO WIDTH NO-BREAK SPACE
  [0xFFA0, 0xFFA0], // HALFWIDTH HANGUL FILLER
  [0xFFF0, 0xFFF8], // <reserved>
  [0x1BCA0, 0x1BCA3], // SHORTHAND FORMAT LETTER OVERLAP..UP STEP
  [0x1D173, 0x1D17A], // MUSICAL SYMBOL BEGIN BEAM..END PHRASE
  [0xE0000, 0xE0000], // <reserved>
  [0xE0001, 0xE0001], // LANGUAGE TAG
  [0xE0002, 0xE001F], // <reserved>
  [0xE0020, 0xE007F], // TAG SPACE..CANCEL TAG
  [0xE0080, 0xE00FF], // <reserved>
  [0xE0100, 0xE01EF], // VARIATION SELECTOR-17..256
  [0xE01F0, 0xE0FFF], // <reserved>
];

/** Every code point of the set, as a one-character string with its `U+XXXX` name. */
export function* defaultIgnorables(): Generator<{ c: string; name: string }> {
  for (const [from, to] of DEFAULT_IGNORABLE_RANGES) {
    for (let cp = from; cp <= to; cp++) {
      yield { c: String.fromCodePoint(cp), name: `U+${cp.toString(16).toUpperCase().padStart(4, "0")}` };
    }
  }
}
