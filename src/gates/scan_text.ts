/**
 * Gate 3, the description scan's rules over one text (a description, a title, a name, a default,
 * the server's `initialize.instructions`; scan.ts finds the texts): prompt-injection phrasing
 * (Hermes's ten patterns, pattern 1 widened to its paraphrase family, pattern 4 to the start of a
 * line or sentence, pattern 6 narrowed to concealment from the user), further concealment phrasing,
 * and hidden Unicode (unicode.ts: TAG characters outside emoji flags, bidi controls and marks,
 * zero-width characters outside emoji and script joins, soft hyphens, selector runs). Phrasing is
 * matched after hidden characters are removed and look-alikes folded (confusables.ts: NFKC for
 * fullwidth forms, diacritics, Cyrillic, Greek, Armenian and other homoglyphs, small capitals), so
 * `ig\u00ADnore`, `іgnore`, `ｉｇｎｏｒｅ` and `ɪɢɴᴏʀᴇ` read `ignore`, in the text, in it without
 * markdown emphasis inside words (`ig**no**re`) and in each identifier read as words
 * (`IGNORE_ALL_PREVIOUS_INSTRUCTIONS`, `ignorePreviousRules`). Findings are reported, never
 * blocking. Pure.
 */
import { terminalSafe } from "./terminal_text.ts";
import { findHidden, foldForMatching, HIDDEN_NAMES } from "./unicode.ts";

/** Up to `n` words of filler between the words a phrase is made of ("ignore ALL of the previous …"). */
const gap = (n: number) => String.raw`(?:\W+\w+){0,${n}}?\W+`;
const GAP = gap(4);
const NOT = String.raw`(?:do\s+not|don'?t|never|must\s+not|mustn'?t|should\s+not|shouldn'?t)`;
const SAY = String.raw`(?:tell|inform|mention|reveal|disclose|say|show|notify|alert)`;
const USER = String.raw`(?:the\s+)?(?:user|users|human|humans|operator|anyone|anybody)\b`;

/**
 * Hermes's `_MCP_INJECTION_PATTERNS`, in its order: 1 widened to the paraphrase family
 * (ignore / disregard / forget / override × all / any / the … × previous / prior / above … ×
 * instructions / directives / rules …, with words between), 4 only where a line or sentence
 * starts ("Operating system: Linux" is not a role marker), 6 narrowed to hiding things from the
 * user ("do not reveal internal IDs" is an ordinary instruction; "never mention this to the user"
 * and "do not mention that notes are copied" are not).
 */
export const INJECTION_PATTERNS: readonly RegExp[] = [
  new RegExp(
    String.raw`\b(?:ignore|disregard|forget|override)${gap(6)}` +
      String.raw`(?:previous|prior|above|earlier|preceding|foregoing|former|original|initial|system)${
        gap(3)
      }?` +
      String.raw`(?:instructions?|directives?|rules|guidelines|prompts?|commands|context)\b|` +
      String
        .raw`\b(?:ignore|disregard|forget)\W+(?:all|everything)\W+(?:(?:said|written|stated)\W+)?(?:above|before)\b|` +
      String.raw`\b(?:ignore|disregard|forget)\W+all\W+(?:previous|prior|earlier)(?=\s*(?:[.!?;\n]|$))`,
    "i",
  ),
  /you\s+are\s+now\s+a/i,
  /your\s+new\s+(task|role|instructions?)\s+(is|are)/i,
  /(?:^|[\n.!?]\s*)system\s*:\s*/i,
  /<\s*(system|human|assistant)\s*>/i,
  new RegExp(
    String
      .raw`\b${NOT}\s+${SAY}\b(?:${GAP}?(?:to\s+|from\s+)?${USER}|\s+(?:that|what|how|where|this|these)\b)`,
    "i",
  ),
  /(curl|wget|fetch)\s+https?:\/\//i,
  /base64\.(b64decode|decodebytes)/i,
  /exec\s*\(|eval\s*\(/i,
  /import\s+(subprocess|os|shutil|socket)/i,
];

/** Concealment phrasing beyond pattern 6. */
export const CONCEALMENT_PATTERNS: readonly RegExp[] = [
  /\b(?:don'?t|do\s+not|never)\s+(?:let|show|alert|notify|warn)\s+the\s+user/i,
  /without\s+(?:telling|informing|notifying|alerting|asking)\s+the\s+user/i,
  /\bthe\s+user\s+(?:must|should)\s+(?:not|never)\s+(?:know|see|be\s+told)/i,
  /\bkeep\s+(?:this|it)\s+(?:a\s+)?(?:secret|hidden|confidential)\b/i,
  /\bhide\s+(?:this|it)\s+from\s+the\s+user/i,
  /\b(?:secretly|silently|quietly|covertly)\s+(?:send|forward|upload|exfiltrate|include|append|copy|read)/i,
];

/** The hidden-Unicode rules by name, in the order findings are reported. */
export const HIDDEN_UNICODE: readonly string[] = [...new Set(Object.values(HIDDEN_NAMES))];

export interface ScanFinding {
  /** Where: e.g. `tool read_file`, `tool read_file parameter path`, `instructions`. */
  where: string;
  /** Which rule matched. */
  rule: string;
  /** About 200 characters around the match, hidden characters made visible. */
  excerpt: string;
}

const EXCERPT = 200;

/**
 * The identifiers of a folded text (`IGNORE_ALL_PREVIOUS`, `ignorePrevious`, `you-are-now-a`)
 * read as words, each with where it starts. One at a time, so a list of them (`ignoreCase,
 * previousInstructionsCount`) is not read as one phrase.
 */
function identifierWords(folded: string): { words: string; at: number }[] {
  const out: { words: string; at: number }[] = [];
  for (const m of folded.matchAll(WORD_RUN)) {
    if (!IDENTIFIER.test(m[0])) continue;
    const words = m[0].replace(/[_-]+/g, " ").replace(/(\p{Ll})(?=\p{Lu})/gu, "$1 ");
    out.push({ words, at: m.index! });
  }
  return out;
}
/** A run of letters, digits, `_` and `-` (one class: linear, however long the run). */
const WORD_RUN = /[\p{L}\p{N}_-]+/gu;
/** A run that is an identifier of several words: joined by `_` or `-`, or camelCase. */
const IDENTIFIER = /[\p{L}\p{N}][_-]+[\p{L}\p{N}]|\p{Ll}\p{Lu}/u;

/** Markdown emphasis inside a word (`ig**no**re`, `e*x*ec`, `in~~struc~~tions`). */
const EMPHASIS_IN_WORD = /(?<=[\p{L}\p{N}])[*~`]+(?=[\p{L}\p{N}])/gu;

/** The folded text with emphasis inside words taken out, when there is any: a model reads past it. */
function withoutEmphasis(folded: string, origin: number[]): { folded: string; origin: number[] }[] {
  const kept: [number, number][] = [];
  let last = 0;
  for (const m of folded.matchAll(EMPHASIS_IN_WORD)) {
    kept.push([last, m.index]);
    last = m.index + m[0].length;
  }
  if (!last) return [];
  kept.push([last, folded.length]);
  const at: number[] = [];
  for (const [from, to] of kept) for (let i = from; i < to; i++) at.push(origin[i]);
  return [{ folded: kept.map(([from, to]) => folded.slice(from, to)).join(""), origin: at }];
}

export function scanText(where: string, text: string | undefined): ScanFinding[] {
  if (!text) return [];
  const out: ScanFinding[] = [];
  const hit = (rule: string, index: number) => out.push({ where, rule, excerpt: excerpt(text, index) });
  const { folded, origin } = foldForMatching(text);
  const identifiers = identifierWords(folded);
  const texts = [{ folded, origin }, ...withoutEmphasis(folded, origin)];
  /**
   * The first match of `re` in the text (as written, then without emphasis inside words), or else
   * in one of its identifiers read as words.
   */
  const find = (re: RegExp): { match: string; index: number } | undefined => {
    for (const t of texts) {
      const m = re.exec(t.folded);
      if (m) return { match: m[0], index: t.origin[m.index] ?? 0 };
    }
    for (const id of identifiers) {
      const w = re.exec(id.words);
      if (w) return { match: w[0], index: origin[id.at] ?? 0 };
    }
  };
  INJECTION_PATTERNS.forEach((re, i) => {
    const m = find(re);
    if (m) hit(`injection pattern ${i + 1} (${re.source})`, m.index);
  });
  for (const re of CONCEALMENT_PATTERNS) {
    const m = find(re);
    if (m) hit(`concealment phrasing (${m.match})`, m.index);
  }
  const hidden = findHidden(text);
  for (const name of HIDDEN_UNICODE) {
    const first = hidden.find((h) => HIDDEN_NAMES[h.cls] === name);
    if (first) hit(`hidden ${name}`, first.index);
  }
  return out;
}

function excerpt(text: string, index: number): string {
  const start = Math.max(0, index - 60);
  const slice = text.slice(start, start + EXCERPT);
  return (start > 0 ? "…" : "") + terminalSafe(visible(slice)) + (start + EXCERPT < text.length ? "…" : "");
}

/** Hidden characters as `<U+XXXX>` so a log reader can see them. */
export function visible(s: string): string {
  const hidden = findHidden(s);
  let out = "";
  let last = 0;
  for (const h of hidden) {
    out += s.slice(last, h.index) +
      `<U+${h.char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}>`;
    last = h.index + h.char.length;
  }
  return (out + s.slice(last)).replace(/\s+/g, " ");
}
