/**
 * Parameter expansion as far as screening (gate 1) needs it: the variables a script set itself
 * (`F=~/.bashrc; echo x >> $F`), the positional parameters a `-c` script is given after it
 * (`sh -c '"$@"' _ curl …`: `$0`, `$1`…, `$@`, `$*`, `${@:2}`), the words in `${X:-word}`,
 * `${X-word}`, `${X:=word}` and `${X:+word}`, `${!X}` (the variable X names), and what
 * `$(echo …)`, `$(printf …)` and their backtick forms print. A variable the script did not set is
 * unknown (the environment may hold anything), so its default or alternative word is what is
 * screened: the cautious reading. An expanded word is split at white space. Other expansions stay
 * as written; the variables a script sets out of this reading's sight (`read`, `mapfile`,
 * `printf -v`, `getopts`) are noted as such, and a loop variable's words kept. Brace expansion
 * (`{a,b}`, `{a..c}`) comes first, as in bash. Pure, apart from the parameters a script changes
 * (`X=…`, `shift`, `set --`, `read X`, `for X in …`).
 */

import { printed } from "./shell_effects.ts";
import { closingBrace, closingParen, parseShell } from "./shell_words.ts";

export interface ShellParams {
  /** Variables the script set. */
  vars: Map<string, string>;
  /** `$0` first, then `$1`, `$2`, …: the arguments after a `-c` script. */
  positional: string[];
  /** Variables the script set to what this reading cannot see (`read X`, `printf -v X`). */
  unseen: Set<string>;
  /** Loop variables and the words they take in turn (`for X in a b`). */
  loops: Map<string, string[]>;
}

export const noParams = (positional: string[] = []): ShellParams => ({
  vars: new Map(),
  positional,
  unseen: new Set(),
  loops: new Map(),
});

/** `for X in a b` and `select X in …` (words expanded): X takes each word in turn; `for X` the parameters. */
export function noteLoop(words: readonly string[], p: ShellParams): void {
  if ((words[0] !== "for" && words[0] !== "select") || !/^[A-Za-z_]\w*$/.test(words[1] ?? "")) return;
  p.loops.set(words[1], words[2] === "in" ? words.slice(3) : listOf(p));
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
    if (c === "`" && word.indexOf("`", i + 1) > i) {
      const close = word.indexOf("`", i + 1);
      out += printedBy(word.slice(i + 1, close), p) ?? word.slice(i, close + 1);
      i = close + 1;
    } else if (c !== "$") {
      out += c;
      i++;
    } else if (word[i + 1] === "(" && word[i + 2] !== "(") {
      const close = closingParen(word, i + 1);
      out += printedBy(word.slice(i + 2, close), p) ?? word.slice(i, close + 1);
      i = close + 1;
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

/** What `$(script)` prints when its script is one `echo` or `printf` (undefined otherwise). */
function printedBy(script: string, p: ShellParams): string | undefined {
  const { commands } = parseShell(script);
  if (commands.length !== 1) return undefined;
  const text = printed(commands[0].words.map((w) => expandText(w, p)));
  return text?.replace(/\n+$/, "");
}

/** Options that take a value, of the builtins that set variables out of sight. */
const READERS: Record<string, { valued: string; arrays: string; fallback?: string }> = {
  read: { valued: "d i n N p t u", arrays: "a", fallback: "REPLY" },
  mapfile: { valued: "d n O s u C c", arrays: "", fallback: "MAPFILE" },
  readarray: { valued: "d n O s u C c", arrays: "", fallback: "MAPFILE" },
  printf: { valued: "", arrays: "v" },
  getopts: { valued: "", arrays: "" },
};

/** The variables `read`, `mapfile`, `printf -v` and `getopts` set (the values come from elsewhere). */
function setOutOfSight(argv: readonly string[]): string[] {
  if (!Object.hasOwn(READERS, argv[0] ?? "")) return [];
  const r = READERS[argv[0]];
  const names: string[] = [];
  let i = 1;
  for (; i < argv.length && /^-[A-Za-z]/.test(argv[i]); i++) {
    const flag = argv[i].slice(1);
    const last = flag[flag.length - 1];
    if (r.arrays.includes(last)) names.push(argv[++i] ?? "");
    else if (r.valued.split(" ").includes(last)) i++;
  }
  if (argv[0] === "printf") return names;
  const operands = argv.slice(argv[0] === "getopts" ? i + 1 : i);
  if (!operands.length && !names.length && r.fallback) names.push(r.fallback);
  return [...names, ...(argv[0] === "getopts" ? operands.slice(0, 1) : operands)]
    .filter((n) => /^[A-Za-z_]\w*$/.test(n));
}

/** How a command's standard input is redirected last (`<` a file, `<<<`, `<<`, `<<-`), if it is. */
export function inputFrom(redirects: readonly { op: string }[]): string | undefined {
  return redirects.filter((r) => ["<", "<<", "<<-", "<<<"].includes(r.op)).at(-1)?.op;
}

/**
 * The parameters a command leaves for the next: `shift [n]`, `set -- …`, `read X`, `unset X`, ….
 * `fromFile`: its standard input is a file (`read V < .nvmrc`): what it reads is unknown, as a
 * value from `$(cat .nvmrc)` is, not text the manifest holds and screening did not follow.
 */
export function updateParams(argv: readonly string[], p: ShellParams, fromFile = false): void {
  if (argv[0] === "shift") p.positional.splice(1, Number(argv[1] ?? 1) || 1);
  else if (argv[0] === "set" && argv.includes("--")) {
    p.positional = [p.positional[0] ?? "$0", ...argv.slice(argv.indexOf("--") + 1)];
  }
  for (const name of setOutOfSight(argv)) {
    if (fromFile && argv[0] !== "printf") {
      p.vars.delete(name);
      p.unseen.delete(name);
    } else p.unseen.add(name);
  }
  // `unset IFS`: back to the default splitting (and a name unset is no longer set out of sight)
  if (argv[0] === "unset") {
    for (const name of argv.slice(1).filter((a) => !a.startsWith("-"))) {
      p.vars.delete(name);
      p.unseen.delete(name);
    }
  }
}

/** How many words one brace expansion may make (the rest are not made). */
const MAX_BRACE_WORDS = 64;

/**
 * A word's brace expansion, as bash makes it before any other: `{c,}url` is `curl url`,
 * `{c..c}url` is `curl`. Quotes are already gone, so a quoted `{a,b}` is expanded too (cautious).
 */
export function expandBraces(word: string): string[] {
  const done: string[] = [];
  /** Words still to expand, and where in each the next brace is looked for (first one first). */
  const todo: [string, number][] = [[word, 0]];
  for (let steps = 0; todo.length && steps < 4 * MAX_BRACE_WORDS; steps++) {
    const [w, from] = todo.shift()!;
    const open = braceOpen(w, from);
    const close = open < 0 ? -1 : braceClose(w, open);
    const parts = close < 0 ? undefined : braceParts(w.slice(open + 1, close));
    if (close < 0) done.push(w);
    else if (!parts) todo.unshift([w, open + 1]);
    else {
      const expanded = parts.map((p): [string, number] => [w.slice(0, open) + p + w.slice(close + 1), open]);
      todo.unshift(...expanded);
    }
  }
  return [...done, ...todo.map(([w]) => w)].slice(0, MAX_BRACE_WORDS);
}

/** The first `{` from `from` on that is not a `${`. */
function braceOpen(word: string, from: number): number {
  for (let i = from; i < word.length; i++) if (word[i] === "{" && word[i - 1] !== "$") return i;
  return -1;
}

/** The `}` closing the `{` at `open` (braces nest), or -1. */
function braceClose(word: string, open: number): number {
  let depth = 0;
  for (let i = open; i < word.length; i++) {
    if (word[i] === "{") depth++;
    else if (word[i] === "}" && --depth === 0) return i;
  }
  return -1;
}

/** The alternatives of `{inner}`: `a,b` or a sequence `a..e`, `1..3`; undefined when neither. */
function braceParts(inner: string): string[] | undefined {
  const seq = /^(?:([A-Za-z])\.\.([A-Za-z])|(-?\d+)\.\.(-?\d+))$/.exec(inner);
  if (seq) {
    const [from, to] = seq[1]
      ? [seq[1].charCodeAt(0), seq[2].charCodeAt(0)]
      : [Number(seq[3]), Number(seq[4])];
    const step = from <= to ? 1 : -1;
    const out: string[] = [];
    for (let n = from; out.length < MAX_BRACE_WORDS; n += step) {
      out.push(seq[1] ? String.fromCharCode(n) : String(n));
      if (n === to) break;
    }
    return out;
  }
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < inner.length; i++) {
    if (inner[i] === "{") depth++;
    else if (inner[i] === "}") depth--;
    else if (inner[i] === "," && depth === 0) {
      parts.push(inner.slice(start, i));
      start = i + 1;
    }
  }
  return parts.length ? [...parts, inner.slice(start)] : undefined;
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
  const indirect = /^!([A-Za-z_][A-Za-z0-9_]*|\d+)$/.exec(inner);
  if (indirect) {
    const name = valueOf(indirect[1], p);
    return name && /^(?:[A-Za-z_][A-Za-z0-9_]*|\d+)$/.test(name) ? valueOf(name, p) : undefined;
  }
  const m = BRACED.exec(inner);
  if (!m) return undefined; // `${#X}`, `${!X*}`: not a value this reading knows
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
