/**
 * Parameter expansion as far as screening (gate 1) needs it: the variables a script set itself
 * (`F=~/.bashrc; echo x >> $F`), the positional parameters a `-c` script is given after it
 * (`sh -c '"$@"' _ curl …`: `$0`, `$1`…, `$@`, `$*`, `${@:2}`), and the words in `${X:-word}`,
 * `${X-word}`, `${X:=word}` and `${X:+word}`. A variable the script did not set is unknown (the
 * environment may hold anything), so its default or alternative word is what is screened: the
 * cautious reading. An expanded word is split at white space. Other expansions stay as written.
 * Pure, apart from the parameters a script changes (`X=…`, `shift`, `set --`).
 */

import { closingBrace } from "./shell_words.ts";

export interface ShellParams {
  /** Variables the script set. */
  vars: Map<string, string>;
  /** `$0` first, then `$1`, `$2`, …: the arguments after a `-c` script. */
  positional: string[];
}

/** `"$@"`, `$*`, `"${@}"`, `"${@:2}"`, `${*:1:3}`: the whole word is the list of parameters. */
const LIST_WORD = /^\$(?:[@*]|\{[@*](?::(\d+)(?::(\d+))?)?\})$/;
/** A name, a positional parameter or a special one, then what `${…}` does with it. */
const BRACED = /^([A-Za-z_][A-Za-z0-9_]*|\d+|[@*#?$!-])([\s\S]*)$/;
const DEFAULTING = /^(:?[-=+?])([\s\S]*)$/;

/** The script mentions its parameter list (`$@`, `$*`, `${@…}`, `${*…}`). */
export const usesParameterList = (script: string): boolean => /\$\{?[@*]/.test(script);

/** The words a parsed word (quotes already removed) stands for. */
export function expandWord(word: string, p: ShellParams): string[] {
  const list = LIST_WORD.exec(word);
  if (list) return listOf(p, list[1], list[2]);
  const text = expandText(word, p);
  return text === word ? [word] : text.split(/\s+/).filter(Boolean);
}

/** `word` with each expansion this reading knows replaced; unknown ones as written. */
export function expandText(word: string, p: ShellParams): string {
  let out = "";
  let i = 0;
  while (i < word.length) {
    const c = word[i];
    if (c !== "$") {
      out += c;
      i++;
    } else if (word[i + 1] === "{") {
      const close = closingBrace(word, i + 1);
      out += braced(word.slice(i + 2, close), p) ?? word.slice(i, close + 1);
      i = close + 1;
    } else {
      const m = /^(?:[A-Za-z_][A-Za-z0-9_]*|[0-9@*])/.exec(word.slice(i + 1));
      const value = m ? valueOf(m[0], p) : undefined;
      out += value ?? (m ? "$" + m[0] : "$");
      i += 1 + (m ? m[0].length : 0);
    }
  }
  return out;
}

/** The parameters a command leaves for the next: `shift [n]`, `set -- …`. */
export function updateParams(argv: readonly string[], p: ShellParams): void {
  if (argv[0] === "shift") p.positional.splice(1, Number(argv[1] ?? 1) || 1);
  else if (argv[0] === "set" && argv.includes("--")) {
    p.positional = [p.positional[0] ?? "$0", ...argv.slice(argv.indexOf("--") + 1)];
  }
}

function listOf(p: ShellParams, offset?: string, length?: string): string[] {
  const from = offset === undefined ? 1 : Number(offset);
  return p.positional.slice(from, length === undefined ? undefined : from + Number(length));
}

function valueOf(name: string, p: ShellParams): string | undefined {
  if (/^\d+$/.test(name)) return p.positional[Number(name)];
  if (name === "@" || name === "*") return listOf(p).join(" ");
  return p.vars.get(name);
}

/** The text of `${inner}`, or undefined to keep it as written. */
function braced(inner: string, p: ShellParams): string | undefined {
  const m = BRACED.exec(inner);
  if (!m) return undefined; // `${#X}`, `${!X}`: not a value this reading knows
  const [, name, rest] = m;
  const value = valueOf(name, p);
  if (rest === "") return value;
  const list = /^:(\d+)(?::(\d+))?$/.exec(rest);
  if (list && (name === "@" || name === "*")) return listOf(p, list[1], list[2]).join(" ");
  const op = DEFAULTING.exec(rest);
  if (!op) return undefined;
  const word = expandText(op[2], p).replace(/\\(.)|["']/g, "$1");
  const set = op[1].startsWith(":") ? !!value : value !== undefined;
  if (op[1].endsWith("?")) return value;
  if (op[1].endsWith("+")) return value === undefined || set ? word : "";
  if (op[1].endsWith("=") && !set && /^[A-Za-z_]/.test(name)) p.vars.set(name, word);
  return set ? value : word; // unknown (`undefined`): the word, as when unset
}
