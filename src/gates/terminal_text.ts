/**
 * Text from outside (an upstream's names, descriptions, messages, results, stderr; a project's or
 * adapter's files) on its way to a terminal: control characters (C0 but tab and newline, DEL, C1)
 * and bidi controls are shown as `\uXXXX` escapes, so nothing can move the cursor, erase or
 * overwrite a line, retitle the window, write the clipboard (OSC 52) or reorder what is shown in
 * the operator's terminal. The escape is JSON's, so JSON output stays valid and means the same.
 * `keepColor` lets through the colour codes hermit itself writes (`cli/output.ts`). Pure.
 */
// deno-lint-ignore no-control-regex
const UNSAFE = /\x1b\[(?:0|1|2|31|32|33)m|[\x00-\x08\x0B-\x1F\x7F-\x9F\u202A-\u202E\u2066-\u2069]/g;

const escaped = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;

export function terminalSafe(text: string, keepColor = false): string {
  return text.replace(
    UNSAFE,
    (m) => m.length === 1 ? escaped(m) : keepColor ? m : escaped(m[0]) + m.slice(1),
  );
}
