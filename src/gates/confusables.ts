/**
 * Look-alikes of the ASCII letters and punctuation gate 3's phrasing rules are written in, and how
 * a character is folded to them before matching (unicode.ts `foldForMatching`). NFKC first
 * (fullwidth, mathematical, circled and superscript forms), then what NFKC leaves: letters with
 * diacritics read as their base letter (`ìgnöré`, a combining mark dropped), and the letters and
 * punctuation of Unicode's confusables for a–z, A–Z and `( ) : < > /` that are letters of another
 * script or Latin letters of another shape: Cyrillic, Greek, Armenian, Cherokee, Lisu, Coptic,
 * Latin small capitals (`ᴇxᴇᴄ`) and IPA letters, the stroke letters no decomposition reaches (ø,
 * ł), enclosed and regional-indicator letters. Digits and the Arabic and Hebrew letters the list
 * also names are left alone. Only the text the rules match is folded; what a host sees is not.
 * Pure.
 */

/** Each ASCII character and the characters that look like it (by case where there is one). */
const LOOK_ALIKES: Record<string, string> = {
  a: "аɑαⲁ⍺ᴀ",
  A: "АΑᎪꓮᗅ",
  b: "ЬƄᏏᖯβʙ",
  B: "ВΒᏴꓐ",
  c: "сϲⲥᴄꮯ",
  C: "СϹⲤᏟꓚ",
  d: "ԁᏧᑯꓒđᴅ",
  D: "ᎠꓓᗪĐ",
  e: "еҽꬲ℮εɇᴇ",
  E: "ЕΕᎬꓰⴹ",
  f: "քꬵꞙꜰ",
  F: "ꓝϜᖴ",
  g: "ɡցᶃƍɢ",
  G: "ԌᏀᏳꓖ",
  h: "һհᏂнħʜ",
  H: "НΗᎻꓧⲎ",
  i: "іιɩɪıꙇӏᎥꭵɨ",
  I: "ІΙӀⲒꓲ",
  j: "јϳᴊ",
  J: "ЈͿᎫꓙ",
  k: "κкᴋ",
  K: "КΚᏦꓗⲔ",
  l: "ǀłʟ",
  L: "ᏞꓡⳐŁ",
  m: "мᴍ",
  M: "МΜᎷꓟⲘ",
  n: "ոռɴ",
  N: "ΝⲚꓠ",
  o: "оοσօⲟᴏᴑø",
  O: "ОΟՕⲞꓳØ",
  p: "рρϱⲣ⍴ᴘ",
  P: "РΡᏢꓑⲢ",
  q: "ԛգզꞯ",
  Q: "Ԛ",
  r: "гꭇꭈᴦⲅꮁʀ",
  R: "ᏒꓣƦ",
  s: "ѕꜱꮪƽ",
  S: "ЅᏚꓢՏ",
  t: "тτŧᴛ",
  T: "ТΤᎢꓔⲦ",
  u: "υʋսᴜꭎꭒꞟʉ",
  U: "Սꓴ",
  v: "νѵᴠ",
  V: "ѴᏙꓦ",
  w: "ԝѡաɯᴡꮃ",
  W: "ԜᎳᏔꓪ",
  x: "хχᕁᕽ×⨯",
  X: "ХΧⲬꓫ",
  y: "уүγɣʏყ",
  Y: "УҮΥᎩᎽꓬ",
  z: "ᴢꮓ",
  Z: "ΖᏃꓜ",
  "(": "❨❪⟮﴾",
  ")": "❩❫⟯﴿",
  ":": "։׃꞉ː∶˸ꓽ",
  "<": "‹ᐸ˂❮",
  ">": "›ᐳ˃❯",
  "/": "∕⁄╱⟋",
};

const FOLD = new Map<string, string>(
  Object.entries(LOOK_ALIKES).flatMap(([ascii, alikes]) =>
    [...alikes].map((c) => [c, ascii] as [string, string])
  ),
);
/** Enclosed letters NFKC leaves (negative circled, negative squared) and the regional indicators. */
const LETTER_BLOCKS: [number, number][] = [[0x1F150, 0x1F169], [0x1F170, 0x1F189], [0x1F1E6, 0x1F1FF]];
const MARK = /\p{Mn}/u;

/** `c` (one code point) as the matching reads it: ASCII where it looks like ASCII, "" for a mark. */
export function foldChar(c: string): string {
  const direct = FOLD.get(c); // before NFKD: it takes ϲ (a look-alike of c) to ς, which is not
  if (direct) return direct;
  let out = "";
  for (const f of c.normalize("NFKD")) {
    if (MARK.test(f)) continue;
    const cp = f.codePointAt(0)!;
    const block = LETTER_BLOCKS.find(([from, to]) => cp >= from && cp <= to);
    out += block ? String.fromCharCode(65 + cp - block[0]) : FOLD.get(f) ?? f;
  }
  return out;
}
