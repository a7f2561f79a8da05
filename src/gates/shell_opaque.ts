/**
 * What a POSIX shell payload runs that screening (gate 1) cannot read, so cannot clear: a command
 * whose name is built out of sight (a word split by a custom `IFS`, a variable set by `read`,
 * `mapfile`, `printf -v` or `declare -n`, a value changed by `${X/a/b}`-style operations, `${!X}` naming
 * another variable), and a shell whose script comes from its standard input when that text is not
 * in the manifest (`bash -s` reading the call's arguments or the host's messages, `prog | sh`
 * from a program's output). A script the manifest spells out (`echo … | sh`, here-documents,
 * here-strings, `sh <(echo …)`) is read as one instead; a file (`sh < f`, `cat f | sh`) is not
 * read, as `sh f` is not. Pure.
 */
import { printed, readsScriptFromStdin } from "./shell_effects.ts";
import type { ShellParams } from "./shell_expand.ts";
import { baseName, COMMAND_FLAG, isShell } from "./shell_unwrap.ts";
import { parseShell, type Redirect } from "./shell_words.ts";

/** One simple command as it runs: words expanded, wrappers peeled off. */
export interface Resolved {
  argv: string[];
  redirects: Redirect[];
  /** Its standard input is the previous command's output. */
  piped: boolean;
  /** Its words before the wrappers were peeled off (`xargs -I{} sh -c '{}'`). */
  words: string[];
}

/** References in a word left as written: `$X`, `${X…}`, `${!X}`, `$1`. */
const REFERENCE = /\$\{?(!?)([A-Za-z_][A-Za-z0-9_]*|\d+)/g;

/** The script set `IFS` to something other than blanks, so an unquoted expansion splits where it says. */
function customIfs(p: ShellParams): boolean {
  const ifs = p.vars.get("IFS");
  return p.unseen.has("IFS") || (ifs !== undefined && !/^[ \t\n]*$/.test(ifs));
}

/**
 * Why the command named `name` cannot be read, or undefined: `origin` is the word it was expanded
 * from (undefined when written plainly), and whether an expansion in it stood outside quotes (only
 * that is split by IFS: `"$d/node"` is one word whatever IFS is).
 */
export function unreadCommand(
  name: string,
  origin: { word: string; split: boolean } | undefined,
  p: ShellParams,
): string | undefined {
  if (origin?.split && customIfs(p)) return `'${origin.word}' split by a custom IFS`;
  // the parameters were set from words a custom IFS split (`set -- $X`), quoted or not here
  if (origin && p.unseen.has("@") && /\$\{?[@*\d]/.test(origin.word)) {
    return `'${origin.word}' holds words split by a custom IFS`;
  }
  for (const [ref, bang, v] of name.matchAll(REFERENCE)) {
    if (bang) return `'${name}' names the variable it runs through another`;
    if (p.unseen.has(v)) {
      return `'${name}' is set where screening cannot see (read, mapfile, printf -v, declare -n)`;
    }
    // a value written plainly, then changed out of sight (a value from `$(…)` is unknown anyway)
    const value = /^\d+$/.test(v) ? p.positional[Number(v)] : p.vars.get(v);
    if (value !== undefined && !/[$`]/.test(value) && ref.startsWith("${")) {
      return `'${name}' changes a value in a way screening does not follow`;
    }
  }
  return undefined;
}

/** `set -- $X` under a custom IFS: the parameters are words split where screening cannot see. */
export function noteSplitParameters(
  words: readonly string[],
  origins: readonly ({ split: boolean } | undefined)[],
  p: ShellParams,
): void {
  const from = words.indexOf("--");
  if (words[0] === "set" && from > 0 && customIfs(p) && origins.some((o, k) => o?.split && k > from)) {
    p.unseen.add("@");
  }
}

/** Why a shell that reads its script from the standard input it was given cannot be cleared. */
export const STDIN_SCRIPT = "a script on its standard input, not in the manifest";

/** A process substitution, as a word: `<(…)`. */
const PROCESS_SUBSTITUTION = /^<\((.*)\)$/s;

/** The script a process substitution prints when all it runs is `echo`/`printf`; else undefined. */
export function substitutionScript(word: string): string | undefined {
  const m = PROCESS_SUBSTITUTION.exec(word);
  const texts = m ? parseShell(m[1]).commands.map((c) => printed(c.words)) : [];
  return texts.length && texts.every((t) => t !== undefined) ? texts.join("") : undefined;
}

/** The process substitution (`<(…)`) a shell or `source` runs as its script, if any. */
export function scriptSubstitution(r: Resolved): string | undefined {
  const input = r.redirects.filter((x) => x.op === "<").at(-1)?.target;
  const name = r.argv.length ? baseName(r.argv[0]) : "";
  const operand = name === "." || name === "source"
    ? r.argv[1]
    : isShell(r.argv[0] ?? "") && !r.argv.some((a) => COMMAND_FLAG.test(a))
    ? r.argv.slice(1).find((a) => !a.startsWith("-"))
    : undefined;
  return [operand, input].find((w) => w !== undefined && PROCESS_SUBSTITUTION.test(w));
}

/** `xargs` running what it reads as a command or a script (`xargs sh -c`, `xargs -I{} {}`). */
function xargsRunsInput(words: readonly string[]): boolean {
  const at = words.findIndex((w) => baseName(w) === "xargs");
  if (at < 0) return false;
  let replace: string | undefined;
  let i = at + 1;
  for (; i < words.length && words[i].startsWith("-"); i++) {
    const w = words[i];
    if (w === "-I") replace = words[++i];
    else if (w.startsWith("-I")) replace = w.slice(2);
    else if (w.startsWith("--replace")) replace = w.slice(10) || "{}";
    else if (w.startsWith("-i")) replace = w.slice(2) || "{}";
    else if (/^-(?:[aEdLnPs]|-arg-file|-delimiter|-max-args|-max-procs|-max-chars)$/.test(w)) i++;
  }
  const cmd = words.slice(i);
  if (
    replace && cmd.some((w) => w.includes(replace!)) && (isShell(cmd[0] ?? "") || cmd[0].includes(replace))
  ) {
    return true;
  }
  return isShell(cmd[0] ?? "") && COMMAND_FLAG.test(cmd[1] ?? "") && cmd.length === 2;
}

/** The command reads a script (or a command) from its standard input. */
export function runsStdin(r: Resolved): boolean {
  return readsScriptFromStdin(r.argv) || xargsRunsInput(r.words);
}

/**
 * Why the script that `resolved[i]` reads from its standard input cannot be read, or undefined
 * when it can (here-document, here-string, `echo`/`printf` before it) or is a file.
 */
export function unreadStdin(resolved: readonly Resolved[], i: number): string | undefined {
  const r = resolved[i];
  // a here-document, a here-string or a file; `<(…)` is scriptSubstitution's
  if (r.redirects.some((x) => ["<", "<<", "<<-", "<<<", "<&"].includes(x.op))) return undefined;
  if (!r.piped) return STDIN_SCRIPT;
  const before = resolved[i - 1];
  const xargs = before?.words.some((w) => baseName(w) === "xargs"); // prints what it reads
  if (!before || !before.argv.length || (!xargs && printed(before.argv) !== undefined)) return undefined;
  if (baseName(before.argv[0]) === "cat") {
    return before.argv.slice(1).some((a) => !a.startsWith("-")) ? undefined : unreadStdin(resolved, i - 1);
  }
  return `a script piped from '${before.argv[0]}'`;
}

/** Which of `tools` a command name written as a glob (`/usr/bin/cu?l`, `c[u]rl`) may run. */
export function globbedTool(name: string, tools: readonly string[]): string | undefined {
  if (!/[*?]|\[[^\]]+\]/.test(name) || name === "[" || name === "[[") return undefined;
  const source = name.replace(/\[!/g, "[^").split(/(\[[^\]]+\]|[*?])/).map((part, k) =>
    k % 2 ? (part === "*" ? ".*" : part === "?" ? "." : part) : part.replace(/[.+^${}()|\\[\]]/g, "\\$&")
  ).join("");
  const glob = new RegExp(`^${source}$`, "i");
  return tools.find((t) => glob.test(t));
}
