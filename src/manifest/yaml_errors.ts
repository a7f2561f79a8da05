/**
 * A YAML syntax error as the one line a person needs: the real cause (not the first of the
 * parser's follow-on complaints), where it is, and the fix. One mistake makes the parser report
 * several errors (a tab, for instance, also breaks the mapping around it), so the cause is chosen
 * from all of them: a tab in an indentation wins, then the first error in the file, read against
 * the line it is on (a value holding ': ', a quote or bracket never closed, a key out of line, a
 * value starting with a reserved character, a key given twice).
 */
import type { YAMLError } from "yaml";
import { quote } from "./locate.ts";

export interface YamlIssue {
  /** 0-based offset into the text where the cause is. */
  offset: number;
  message: string;
}

/** The cause of `errors` (at least one) in `text`, worded without the "not valid YAML: " the caller adds. Pure. */
export function yamlSyntaxIssue(errors: readonly YAMLError[], text: string): YamlIssue {
  const tab = tabIndent(text);
  if (tab !== undefined) {
    return { offset: tab, message: "a tab indents this line; indent with spaces" };
  }
  const first = [...errors].sort((a, b) => a.pos[0] - b.pos[0])[0];
  return explain(first, text);
}

/** The offset of the first tab in a line's indentation (lines with content only), if any. */
function tabIndent(text: string): number | undefined {
  let offset = 0;
  let block: number | undefined; // the indentation of a block scalar's key (`run: |`), while inside one
  for (const line of text.split("\n")) {
    const indent = /^[ \t]*/.exec(line)![0];
    const content = line.length > indent.length && !line.slice(indent.length).startsWith("#");
    if (block !== undefined && content && !indent.includes("\t") && indent.length <= block) block = undefined;
    if (block === undefined && content && indent.includes("\t")) return offset + indent.indexOf("\t");
    if (block === undefined && /:\s*[|>][-+0-9]*\s*(#.*)?$/.test(line)) block = indent.length;
    offset += line.length + 1;
  }
  return undefined;
}

interface Line {
  start: number;
  text: string;
}

function lineAt(text: string, offset: number): Line {
  const start = text.lastIndexOf("\n", Math.max(0, offset - 1)) + 1;
  const end = text.indexOf("\n", start);
  return { start, text: text.slice(start, end < 0 ? text.length : end) };
}

/** `key: value` on a line (a `- ` list item prefix allowed), the value as written. */
const KEY_VALUE = /^(\s*(?:-\s+)?)([^\s#'"{}[\]][^:#]*?|"[^"]*"|'[^']*'):[ \t]+(.*?)\s*$/;

function explain(e: YAMLError, text: string): YamlIssue {
  const at = e.pos[0];
  const line = lineAt(text, at);
  switch (e.code) {
    case "BLOCK_AS_IMPLICIT_KEY":
    case "MULTILINE_IMPLICIT_KEY": {
      const kv = KEY_VALUE.exec(line.text);
      if (kv && /:\s/.test(kv[3] + " ")) {
        const [, lead, key, value] = kv;
        return {
          offset: line.start + line.text.indexOf(value, lead.length + key.length + 1),
          message:
            `the value of ${key} contains ': ', which YAML reads as a new key; quote the value: ${key}: ${
              quoted(value)
            }`,
        };
      }
      const deeper = deeperKeyBelow(text, line);
      if (kv && deeper) {
        return {
          offset: deeper.offset,
          message: `this key is indented ${spaces(deeper.indent)}, more than ${kv[2]} above it (${
            spaces(indentOf(line.text))
          }), so YAML reads it as more of that value; keys of one mapping start in the same column`,
        };
      }
      break;
    }
    case "MISSING_CHAR": {
      const q = /Missing closing (["'])quote/.exec(e.message)?.[1];
      if (q) {
        const open = unclosedQuote(text, q, at);
        if (open !== undefined) {
          return {
            offset: open,
            message: `the ${q} opened here is never closed; end the value with ${q} on the same line`,
          };
        }
      }
      break;
    }
    case "BAD_INDENT": {
      const flow = /Flow (sequence|map) in block collection/.exec(e.message)?.[1];
      if (flow) {
        const [open, close] = flow === "sequence" ? ["[", "]"] : ["{", "}"];
        const where = unclosedBracket(text, open, close, at);
        if (where !== undefined) {
          return {
            offset: where,
            message: `the ${open} opened here is never closed; end the ${
              flow === "sequence" ? "list" : "mapping"
            } with ${close}`,
          };
        }
      }
      if (/same column/.test(e.message)) {
        const mine = /^ */.exec(line.text)![0].length;
        const theirs = neighbourIndent(text, line.start, mine);
        return {
          offset: line.start + mine,
          message: `this key is indented ${spaces(mine)}${
            theirs === undefined ? "" : `, its neighbours ${theirs}`
          }; keys of one mapping start in the same column`,
        };
      }
      break;
    }
    case "BAD_SCALAR_START": {
      const ch = /reserved character (\S)/.exec(e.message)?.[1] ?? text[at];
      const kv = KEY_VALUE.exec(line.text);
      const fix = kv ? `: ${kv[2]}: ${quoted(kv[3])}` : "";
      return { offset: at, message: `a value cannot start with '${ch}'; quote it${fix}` };
    }
    case "DUPLICATE_KEY": {
      const key = /^\s*(?:-\s+)?("[^"\n]*"|'[^'\n]*'|[^:\n]*)/.exec(text.slice(at))?.[1].trim() ?? "";
      const first = firstLineOfKey(text, key, at);
      return {
        offset: at,
        message: `${quote(key)} appears twice in this mapping${
          first ? ` (first on line ${first})` : ""
        }; a key may appear only once, so remove or merge the repeat`,
      };
    }
    case "MULTIPLE_DOCS":
      return { offset: at, message: "a second document starts here (---); hermit.yaml holds exactly one" };
    case "UNEXPECTED_TOKEN":
      if (text[at] === "\r" && text[at + 1] !== "\n") {
        return {
          offset: at,
          message:
            "a carriage return (\\r) ends this line without a line feed; save the file with LF (or CRLF) line endings",
        };
      }
      break;
  }
  return { offset: at, message: libraryLine(e.message) };
}

const INVISIBLE = /[\p{C}\p{Z}]/gu;

/** True when `s` is blank or holds a character that does not show (control, format, separator). Pure. */
export function unseen(s: string): boolean {
  return s.trim() === "" || [...s.matchAll(INVISIBLE)].some(([c]) => c !== " ");
}

/** `s` in double quotes, every character that does not show escaped (`"\r"`, `"\ufeff"`). Pure. */
export function escaped(s: string): string {
  const unit = (c: string, i: number) => `\\u${c.charCodeAt(i).toString(16).padStart(4, "0")}`;
  return JSON.stringify(s).replace(
    INVISIBLE,
    (c) => c === " " ? c : unit(c, 0) + (c.length > 1 ? unit(c, 1) : ""),
  );
}

/**
 * A message of the YAML library's as one line: its first line, trimmed. The library ends some
 * with the text it stumbled on (`Not a YAML token: ${source}`); when that is blank or does not
 * show (a lone \r, a byte order mark), it is shown escaped rather than left as a colon with
 * nothing after it, and an empty one goes with its colon. Pure.
 */
export function libraryLine(message: string): string {
  const first = message.split("\n")[0];
  const at = first.indexOf(": ");
  if (at < 0) return first.trim() || "the YAML parser gave no reason";
  const [head, detail] = [first.slice(0, at).trimStart(), first.slice(at + 2)];
  if (detail === "") return head;
  return `${head}: ${unseen(detail) ? escaped(detail) : detail.trim()}`;
}

/** `value` quoted for YAML: single quotes unless it holds one, then double quotes with escapes. */
function quoted(value: string): string {
  return value.includes("'") ? JSON.stringify(value) : `'${value}'`;
}

const spaces = (n: number) => `${n} space${n === 1 ? "" : "s"}`;
const indentOf = (line: string) => /^ */.exec(line)![0].length;

/**
 * The next line with content after `line`, when it is a `key: value` indented more than `line`:
 * a key pushed too far in, which YAML reads as the rest of the value above it.
 */
function deeperKeyBelow(text: string, line: Line): { offset: number; indent: number } | undefined {
  let start = line.start + line.text.length + 1;
  while (start < text.length) {
    const next = lineAt(text, start + 1);
    if (next.text.trim() !== "" && !next.text.trimStart().startsWith("#")) {
      const indent = indentOf(next.text);
      return KEY_VALUE.test(next.text) && indent > indentOf(line.text)
        ? { offset: next.start + indent, indent }
        : undefined;
    }
    start = next.start + next.text.length + 1;
  }
  return undefined;
}

/** The offset of the last `q` that opens a value before `before` and is not closed on its line. */
function unclosedQuote(text: string, q: string, before: number): number | undefined {
  let found: number | undefined;
  let offset = 0;
  for (const line of text.slice(0, before).split("\n")) {
    const m = new RegExp(`(?:^\\s*(?:-\\s+)?|:\\s+|[\\[{,]\\s*)(${q})`).exec(line);
    if (m) {
      const from = m.index + m[0].length;
      if (!line.slice(from).includes(q)) found = offset + from - 1;
    }
    offset += line.length + 1;
  }
  return found;
}

/** The offset of the last `open` before `before` whose line does not close it. */
function unclosedBracket(text: string, open: string, close: string, before: number): number | undefined {
  let found: number | undefined;
  let offset = 0;
  for (const line of text.slice(0, before).split("\n")) {
    const i = line.lastIndexOf(open);
    if (i >= 0 && !line.slice(i).includes(close)) found = offset + i;
    offset += line.length + 1;
  }
  return found;
}

/** The indentation of the nearest key line above `start` indented differently from `mine`, but at most 2 away. */
function neighbourIndent(text: string, start: number, mine: number): number | undefined {
  const above = text.slice(0, start).split("\n").reverse();
  for (const l of above) {
    if (!l.trim() || l.trim().startsWith("#")) continue;
    const n = /^ */.exec(l)![0].length;
    if (n !== mine && Math.abs(n - mine) <= 2) return n;
    if (n < mine - 2) return undefined;
  }
  return undefined;
}

/** The line (1-based) where `key` first appears as a key at the same indentation as at `at`. */
function firstLineOfKey(text: string, key: string, at: number): number | undefined {
  const indent = /^ */.exec(lineAt(text, at).text)![0];
  const lines = text.slice(0, lineAt(text, at).start).split("\n");
  for (let i = lines.length - 1; i >= 0; i--) {
    const l = lines[i];
    if (l.startsWith(indent) && l.slice(indent.length).startsWith(`${key}:`)) {
      // keep searching upward for the first one in this block
      let first = i;
      for (let j = i - 1; j >= 0; j--) {
        const lj = lines[j];
        if (lj.trim() && /^ */.exec(lj)![0].length < indent.length) break;
        if (lj.startsWith(indent) && lj.slice(indent.length).startsWith(`${key}:`)) first = j;
      }
      return first + 1;
    }
  }
  return undefined;
}
