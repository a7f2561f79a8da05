/**
 * One simple command of a POSIX shell script read as the shell runs it, for screening
 * (`screen.ts`): its words with braces and parameters expanded, each remembering the word it came
 * from when that held an expansion; then the reserved words before the command dropped, and the
 * assignments and declarations before it taken into the script's variables (`IFS=, read …` sets
 * IFS for that one command). Pure but for the `ShellParams` it updates.
 */
import { expandBraces, expandText, expandWord, type ShellParams } from "./shell_expand.ts";
import { ASSIGNMENT } from "./shell_unwrap.ts";
import type { Redirect, SimpleCommand } from "./shell_words.ts";

/** The word an expanded word came from, when it held an expansion (and whether IFS splits it). */
export type Origin = { word: string; split: boolean } | undefined;

/** A command's words (with their origins, one each) and its redirections, as read so far. */
export interface CommandWords {
  words: string[];
  origins: Origin[];
  redirects: Redirect[];
}

/** Words that may stand where a command name does without being one. */
const RESERVED = new Set(
  "if then else elif fi do done while until case esac for select function coproc { } ! [[ ]]".split(" "),
);
const DECLARERS = new Set(["export", "local", "declare", "typeset", "readonly"]);

/**
 * The command's words and redirection targets with braces and parameters expanded: variables the
 * script set (`F=~/.bashrc; echo x >> $F`) and its parameters are followed.
 */
export function expandCommand(c: SimpleCommand, params: ShellParams): CommandWords {
  const braced = c.words.map((w, k) => ({ words: expandBraces(w), split: !!c.splits?.includes(k) }));
  const raw = braced.flatMap((b) => b.words);
  const splitting = braced.flatMap((b) => b.words.map(() => b.split));
  const expanded = raw.map((w) => expandWord(w, params));
  return {
    words: expanded.flat(),
    origins: expanded.flatMap((ws, k) =>
      ws.map(() => /[$`]/.test(raw[k]) ? { word: raw[k], split: splitting[k] } : undefined)
    ),
    redirects: c.redirects.map((r) => ({ op: r.op, target: expandText(r.target, params) })),
  };
}

/**
 * What is left once the reserved words, assignments and declarations before the command are
 * dropped; the assignments are taken into `params` (a `declare -n` name becomes unseen).
 */
export function dropPrefix(cmd: CommandWords, params: ShellParams): CommandWords {
  let { words, origins } = cmd;
  const drop = (n: number) => [words, origins] = [words.slice(n), origins.slice(n)];
  const vars = params.vars;
  while (words.length && RESERVED.has(words[0])) drop(1);
  const ifs = vars.get("IFS");
  const assign = (w: string) => {
    vars.set(w.slice(0, w.indexOf("=")), w.slice(w.indexOf("=") + 1));
    params.unseen.delete(w.slice(0, w.indexOf("=")));
  };
  for (; words.length && ASSIGNMENT.test(words[0]); drop(1)) assign(words[0]);
  // `IFS=, read …` sets IFS for that one command
  if (words.length && vars.get("IFS") !== ifs) ifs === undefined ? vars.delete("IFS") : vars.set("IFS", ifs);
  if (words.length && DECLARERS.has(words[0])) {
    // `declare -n R=X`: R is X under another name, which this reading does not follow
    const nameref = words.some((w) => /^-[a-zA-Z]*n/.test(w));
    for (const w of words.slice(1).filter((w) => ASSIGNMENT.test(w))) {
      nameref ? params.unseen.add(w.slice(0, w.indexOf("="))) : assign(w);
    }
    drop(words.length);
  }
  return { words, origins, redirects: cmd.redirects };
}
