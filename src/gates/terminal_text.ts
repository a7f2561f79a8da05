/**
 * Text from outside (an upstream's descriptions, messages, results, stderr) on its way to a
 * terminal: control characters (C0 but tab and newline, DEL, C1) are shown as `\x1b`-style
 * escapes, so nothing an upstream sends can move the cursor, erase or overwrite a line, retitle
 * the window or write the clipboard (OSC 52) in the operator's terminal. Pure.
 */
// deno-lint-ignore no-control-regex
const CONTROLS = /[\x00-\x08\x0B-\x1F\x7F-\x9F]/g;

export function terminalSafe(text: string): string {
  return text.replace(CONTROLS, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}
