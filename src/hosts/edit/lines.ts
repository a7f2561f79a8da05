/**
 * Line-level text surgery shared by the comment-preserving editors. Every insertion here has an
 * exact inverse: `appendBlock`/`insertLines` add whole lines, `removeLines` takes the same lines
 * (and the separator the insertion added) away again, so deploy followed by `--remove` gives back
 * the original bytes. Nothing here parses a format; the editors find the offsets.
 */

/** An error for a file hermit refuses to edit (broken syntax, an unexpected shape). */
/** Why a file that does not parse may not: a byte-order mark, which some editors write and parsers refuse. */
export function bomHint(text: string): string {
  return text.startsWith("\uFEFF") ? " (it starts with a byte-order mark: save it without one)" : "";
}

export class EditError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "EditError";
  }
}

/** The file's line ending: CRLF when it has any, else LF. */
export function detectEol(text: string): string {
  return text.includes("\r\n") ? "\r\n" : "\n";
}

/** The indentation step the file uses (a tab, or the smallest run of spaces); two spaces by default. */
export function detectIndentUnit(text: string): string {
  let best: string | undefined;
  for (const m of text.matchAll(/^([ \t]+)\S/gm)) {
    if (m[1].startsWith("\t")) return "\t";
    if (best === undefined || m[1].length < best.length) best = m[1];
  }
  return best ?? "  ";
}

/** Offset of the start of the line holding `pos`. */
export function lineStart(text: string, pos: number): number {
  return text.lastIndexOf("\n", pos - 1) + 1;
}

/** Offset of the end of the line holding `pos` (before its `\r\n` or `\n`). */
export function lineEnd(text: string, pos: number): number {
  const i = text.indexOf("\n", pos);
  if (i < 0) return text.length;
  return i > 0 && text[i - 1] === "\r" ? i - 1 : i;
}

/** The whitespace at the start of the line holding `pos`. */
export function indentAt(text: string, pos: number): string {
  const start = lineStart(text, pos);
  return /^[ \t]*/.exec(text.slice(start))![0];
}

/** True when only whitespace stands between the start of its line and `pos`. */
export function startsLine(text: string, pos: number): boolean {
  return text.slice(lineStart(text, pos), pos).trim() === "";
}

/** End of the last line holding anything but whitespace; 0 for a blank text. */
export function contentEnd(text: string): number {
  let end = text.length;
  while (end > 0 && /\s/.test(text[end - 1])) end--;
  return end === 0 ? 0 : lineEnd(text, end);
}

/** End offset of `pos`'s text minus trailing whitespace (for ranges that swallow newlines). */
export function trimEnd(text: string, from: number, to: number): number {
  while (to > from && /\s/.test(text[to - 1])) to--;
  return to;
}

/**
 * Add `lines` at the end of the file, after its last non-blank line and a blank line (or as the
 * first lines of a blank file). Inverse: `removeLines(…, true)`.
 */
export function appendBlock(text: string, lines: string[], eol: string): string {
  const at = contentEnd(text);
  if (at === 0) return lines.join(eol) + eol + text;
  return text.slice(0, at) + eol + eol + lines.join(eol) + text.slice(at);
}

/**
 * Add `lines` after the line ending at `at` (a line end), after a blank line when `blank`.
 * Inverse: `removeLines(…, blank)`.
 */
export function insertLines(text: string, at: number, lines: string[], eol: string, blank: boolean): string {
  return text.slice(0, at) + eol + (blank ? eol : "") + lines.join(eol) + text.slice(at);
}

/**
 * Remove the whole lines from `from` (a line start) to `to` (a line end) with the line break before
 * them, and the blank line before that when `blank` and there is one; lines at the very start of
 * the file go with the line break after them.
 */
export function removeLines(text: string, from: number, to: number, blank: boolean): string {
  if (from === 0) {
    let end = to;
    if (text.startsWith("\r\n", end)) end += 2;
    else if (text[end] === "\n") end += 1;
    return text.slice(end);
  }
  const eolBefore = (p: number) => p - (p >= 2 && text[p - 2] === "\r" ? 2 : 1);
  let start = eolBefore(from);
  if (blank) {
    const prev = lineStart(text, start);
    if (prev > 0 && text.slice(prev, start).trim() === "") start = eolBefore(prev);
  }
  return text.slice(0, start) + text.slice(to);
}
