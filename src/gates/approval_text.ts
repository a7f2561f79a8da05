/**
 * The arguments of a call as the approval question (gate 5) shows them: every value by its path
 * (`"opts"."target"`), down to the leaves, one per line, each shortened on its own and saying how
 * much was cut, so a long value cannot push the others out of view (a call with too many values,
 * or nested too deep, to show whole is refused instead). Characters a reader cannot see or that
 * reorder text (controls, bidi controls and marks, zero-width and TAG characters, selectors,
 * fillers: every default-ignorable character; white space other than a plain space) are shown as
 * `<U+XXXX>`, never raw. Pure.
 */
import { sha256Text } from "./sha256.ts";
import { DEFAULT_IGNORABLE } from "./unicode.ts";

/** Characters of one value shown before it is cut. */
export const VALUE_CHARS = 200;
/** Characters of one argument name shown before it is cut. */
export const NAME_CHARS = 100;
/**
 * Every value is listed by its path, down to the leaves; a call with more leaves than this, or
 * nested deeper, cannot be shown fairly in one question, and is refused rather than asked about.
 */
export const MAX_LINES = 500;
export const MAX_DEPTH = 32;

/**
 * What a reader does not see as itself: other categories, separators, the braille blank, and
 * every default-ignorable character (selectors, fillers, joiners, marks drawn as nothing).
 */
const UNSEEN = new RegExp(
  `[\\p{Cc}\\p{Cf}\\p{Co}\\p{Cs}\\p{Cn}\\p{Zl}\\p{Zp}\\u00A0\\u1680\\u2000-\\u200A\\u202F\\u205F\\u3000\\u2800${DEFAULT_IGNORABLE}]`,
  "gu",
);

/** `text` with every unseen character as `<U+XXXX>`. */
export function escapeUnseen(text: string): string {
  // a literal "<U+" is shown escaped too, so it cannot pass for an escaped character
  return text.replace(/<U\+/g, "<U+003C>U+").replace(
    UNSEEN,
    (c) => `<U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}>`,
  );
}

/**
 * A fingerprint of `s`, telling apart names cut to the same start: the first 128 bits of SHA-256,
 * so names cannot be chosen to share one (2^64 tries). Of `s` as JSON, which keeps lone surrogates
 * apart (UTF-8 would make them all U+FFFD). Pure.
 */
function fingerprint(s: string): string {
  return sha256Text(JSON.stringify(s)).slice(0, 32);
}

/**
 * The argument lines, one per value down to the leaves, indented by two spaces (`(none)` for no
 * arguments); undefined when they are more than `MAX_LINES` or nested deeper than `MAX_DEPTH`:
 * such a call cannot be shown whole, and what is not shown must not be approved.
 */
export function argumentLines(args: Record<string, unknown>): string[] | undefined {
  const lines: string[] = [];
  // iterative, depth-first in order: a deeply nested value cannot overflow the stack
  const stack: [string, unknown, number][] = Object.entries(args).reverse().map((
    [k, v],
  ) => [shortName(k), v, 0]);
  while (stack.length) {
    const [path, value, depth] = stack.pop()!;
    const entries = value && typeof value === "object" ? Object.entries(value) : [];
    if (entries.length && depth >= MAX_DEPTH) return undefined;
    if (!entries.length) {
      if (lines.length >= MAX_LINES) return undefined;
      lines.push(`  ${path}: ${shortValue(value)}`);
      continue;
    }
    for (let i = entries.length - 1; i >= 0; i--) {
      const [k, v] = entries[i];
      stack.push([Array.isArray(value) ? `${path}[${k}]` : `${path}.${shortName(k)}`, v, depth + 1]);
    }
  }
  return lines.length ? lines : ["  (none)"];
}

function shortName(name: string): string {
  const { text, cut } = shorten(name, NAME_CHARS);
  return escapeUnseen(
    JSON.stringify(text).slice(0, -1) + (cut ? `…"[${cut} more characters, #${fingerprint(name)}]` : '"'),
  );
}

function shortValue(value: unknown): string {
  if (typeof value === "string") {
    const { text, cut } = shorten(value, VALUE_CHARS);
    return escapeUnseen(JSON.stringify(text).slice(0, -1) + (cut ? `…" ${notShown(cut)}` : '"'));
  }
  const json = JSON.stringify(value) ?? String(value);
  const { text, cut } = shorten(json, VALUE_CHARS);
  return escapeUnseen(cut ? `${text}… ${notShown(cut)}` : text);
}

const notShown = (cut: number) => `[${cut} more characters not shown]`;

/** The first `max` code points of `s`, and how many more there were. */
function shorten(s: string, max: number): { text: string; cut: number } {
  const chars = Array.from(s);
  return chars.length <= max
    ? { text: s, cut: 0 }
    : { text: chars.slice(0, max).join(""), cut: chars.length - max };
}
