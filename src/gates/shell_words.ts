/**
 * A shell payload read the way a POSIX shell reads it, far enough for screening (gate 1): simple
 * commands split at `;` `&` `|` `(` `)` and newlines, each word with its quotes and escapes
 * removed (`c''url`, `c\url`, `"curl"` and `$'\x63url'` are all `curl`), redirections apart from
 * words, which commands read the output of the one before them (`a | b`), and the scripts nested
 * in command and process substitutions (`$(…)`, backticks, `<(…)`) handed back to be read in turn.
 * Parameter expansions stay as written (`$HOME/.bashrc`). Not a shell: no aliases, no globbing,
 * here-document bodies read as commands (the cautious reading). Pure.
 */

export interface Redirect {
  /** `>`, `>>`, `>|`, `>&`, `&>`, `&>>`, `<>`, `<`, `<<`, `<<-`, `<<<`, `<&`. */
  op: string;
  target: string;
}

export interface SimpleCommand {
  words: string[];
  /** The words (by index) holding an expansion outside quotes (`$x`, `${x}`, `$(…)`): IFS splits them. */
  splits?: number[];
  redirects: Redirect[];
  /** Its standard input is the output of the command before it (`a | b`, `a |& b`). */
  piped?: true;
}

export interface ParsedScript {
  commands: SimpleCommand[];
  /** The text of each command or process substitution, to be parsed as a script itself. */
  substitutions: string[];
}

/** Longest first, so `>>` is not read as `>` `>`. */
const REDIRECT_OPS = ["&>>", "<<<", "<<-", "&>", ">>", ">|", ">&", "<>", "<<", "<&", ">", "<"];
const SEPARATOR = /[\n;&|()]/;
const BLANK = /[ \t\r]/;

const ANSI_ESCAPES: Record<string, string> = {
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "?": "?",
};

/**
 * The index of the closing `close` for the opening at `open`, skipping escapes and quoted text;
 * `opens(i)` says whether the character at `i` opens a nested pair. `s.length` when unclosed.
 */
function closing(s: string, open: number, close: string, opens: (i: number) => boolean): number {
  let depth = 0;
  for (let i = open; i < s.length; i++) {
    const c = s[i];
    if (c === "\\") i++;
    else if (c === "'") i = end(s.indexOf("'", i + 1), s);
    else if (c === '"') i = closingQuote(s, i + 1);
    else if (opens(i)) depth++;
    else if (c === close && --depth === 0) return i;
  }
  return s.length;
}

/** The index of the `)` closing the `(` at `open`, skipping quoted text; `s.length` when unclosed. */
export function closingParen(s: string, open: number): number {
  return closing(s, open, ")", (i) => s[i] === "(");
}

/**
 * The index of the `}` closing the `${` whose `{` is at `open`: nested `${…}` and quoted text
 * skipped; a bare `{` does not nest (`${X:-{}` ends at its first `}`, as bash reads it).
 */
export function closingBrace(s: string, open: number): number {
  return closing(s, open, "}", (i) => s[i] === "{" && (i === open || s[i - 1] === "$"));
}

function end(i: number, s: string): number {
  return i < 0 ? s.length : i;
}

/** The index of the `"` ending a double-quoted string whose text starts at `from`. */
function closingQuote(s: string, from: number): number {
  for (let i = from; i < s.length; i++) {
    if (s[i] === "\\") i++;
    else if (s[i] === '"') return i;
    else if (s[i] === "$" && s[i + 1] === "(") i = closingParen(s, i + 1);
  }
  return s.length;
}

/** `text` with its C escapes decoded, as `printf`'s format and `echo -e` decode them. */
export function unescapeC(text: string): string {
  return ansiC(text, 0, false).text;
}

/** `$'…'` whose text starts at `from`: the decoded text and the index after the closing quote. */
function ansiC(s: string, from: number, quoted = true): { text: string; next: number } {
  let text = "";
  let i = from;
  for (; i < s.length && !(quoted && s[i] === "'"); i++) {
    if (s[i] !== "\\" || i + 1 >= s.length) {
      text += s[i];
      continue;
    }
    const c = s[++i];
    const hex = (max: number) => {
      const m = new RegExp(`^[0-9a-fA-F]{1,${max}}`).exec(s.slice(i + 1));
      if (!m) return c;
      i += m[0].length;
      return String.fromCodePoint(parseInt(m[0], 16));
    };
    if (c in ANSI_ESCAPES) text += ANSI_ESCAPES[c];
    else if (c === "x") text += hex(2);
    else if (c === "u") text += hex(4);
    else if (c === "U") text += hex(8);
    else if (/[0-7]/.test(c)) {
      const m = /^[0-7]{1,3}/.exec(s.slice(i))!;
      text += String.fromCharCode(parseInt(m[0], 8) & 0xff);
      i += m[0].length - 1;
    } else if (c === "c" && i + 1 < s.length) text += String.fromCharCode(s.charCodeAt(++i) & 0x1f);
    else text += "\\" + c;
  }
  return { text, next: i + 1 };
}

export function parseShell(src: string): ParsedScript {
  const commands: SimpleCommand[] = [];
  const substitutions: string[] = [];
  let cmd: SimpleCommand = { words: [], redirects: [] };
  let word = "";
  let inWord = false;
  /** The word so far is only unquoted digits: before `>` or `<` it is a file descriptor. */
  let digitsOnly = true;
  /** The word so far holds an expansion outside quotes. */
  let splits = false;
  let pending: string | undefined;
  /** The next command reads the output of the one before it. */
  let piped = false;

  const add = (text: string, plain = false) => {
    word += text;
    inWord = true;
    if (!plain || !/^\d*$/.test(text)) digitsOnly = false;
  };
  const endWord = () => {
    if (inWord) {
      if (pending) cmd.redirects.push({ op: pending, target: word });
      else {
        if (splits) (cmd.splits ??= []).push(cmd.words.length);
        cmd.words.push(word);
      }
      pending = undefined;
    }
    word = "";
    inWord = false;
    digitsOnly = true;
    splits = false;
  };
  const endCommand = () => {
    endWord();
    if (cmd.words.length || cmd.redirects.length) {
      commands.push(piped ? { ...cmd, piped: true } : cmd);
      piped = false;
    }
    cmd = { words: [], redirects: [] };
    pending = undefined;
  };
  /** A substitution starting at `open` (its `(`): recorded, and kept in the word as written. */
  const substitution = (start: number, open: number): number => {
    const close = closingParen(src, open);
    substitutions.push(src.slice(open + 1, close));
    add(src.slice(start, close + 1));
    return close + 1;
  };

  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (c === "\\") {
      if (src[i + 1] !== "\n" && i + 1 < src.length) add(src[i + 1]);
      i += 2;
    } else if (c === "'") {
      const close = end(src.indexOf("'", i + 1), src);
      add(src.slice(i + 1, close));
      i = close + 1;
    } else if (c === '"') {
      i = doubleQuoted(i + 1);
    } else if (c === "$" && src[i + 1] === "'") {
      const { text, next } = ansiC(src, i + 2);
      add(text);
      i = next;
    } else if (c === "$" && src[i + 1] === "(" && src[i + 2] !== "(") {
      splits = true;
      i = substitution(i, i + 1);
    } else if (c === "$" && src[i + 1] === "(") {
      const close = closingParen(src, i + 1); // arithmetic: kept as written
      add(src.slice(i, close + 1));
      i = close + 1;
    } else if (c === "$" && src[i + 1] === "{") {
      const close = closingBrace(src, i + 1);
      splits = true;
      add(src.slice(i, close + 1));
      i = close + 1;
    } else if (c === "`") {
      const close = backtick(i + 1);
      substitutions.push(src.slice(i + 1, close).replace(/\\([`\\$])/g, "$1"));
      splits = true;
      add(src.slice(i, close + 1));
      i = close + 1;
    } else if ((c === "<" || c === ">") && src[i + 1] === "(" && !inWord) {
      i = substitution(i, i + 1); // process substitution: a file name to the command
    } else if (c === "#" && !inWord) {
      i = end(src.indexOf("\n", i), src);
    } else if (BLANK.test(c)) {
      endWord();
      i++;
    } else {
      const op = REDIRECT_OPS.find((o) => src.startsWith(o, i));
      if (op) {
        if (inWord && digitsOnly) {
          word = ""; // `2>` names a file descriptor, not a word
          inWord = false;
          digitsOnly = true;
        } else endWord();
        pending = op;
        i += op.length;
      } else if (SEPARATOR.test(c)) {
        const pipe = c === "|" && src[i + 1] !== "|";
        endCommand();
        if (c === "|") i += pipe ? (src[i + 1] === "&" ? 1 : 0) : 1; // `|&`, `||`
        if (pipe) piped = true;
        else if (c !== "(" && c !== "\n") piped = false; // `a | (b)`, `a |⏎ b` still pipe
        i++;
      } else {
        if (c === "$" && /[\w@*#?!$-]/.test(src[i + 1] ?? "")) splits = true;
        add(c, true);
        i++;
      }
    }
  }
  endCommand();
  return { commands, substitutions };

  function doubleQuoted(from: number): number {
    let j = from;
    let text = "";
    for (; j < src.length && src[j] !== '"'; j++) {
      const d = src[j];
      if (d === "\\" && /[$`"\\\n]/.test(src[j + 1] ?? "")) {
        if (src[j + 1] !== "\n") text += src[j + 1];
        j++;
      } else if (d === "$" && src[j + 1] === "(") {
        const close = closingParen(src, j + 1);
        if (src[j + 2] !== "(") substitutions.push(src.slice(j + 2, close));
        text += src.slice(j, close + 1);
        j = close;
      } else if (d === "`") {
        const close = backtick(j + 1);
        substitutions.push(src.slice(j + 1, close).replace(/\\([`\\$])/g, "$1"));
        text += src.slice(j, close + 1);
        j = close;
      } else text += d;
    }
    add(text);
    return j + 1;
  }

  function backtick(from: number): number {
    for (let j = from; j < src.length; j++) {
      if (src[j] === "\\") j++;
      else if (src[j] === "`") return j;
    }
    return src.length;
  }
}
