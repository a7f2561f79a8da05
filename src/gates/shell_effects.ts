/**
 * Which files one simple shell command writes: its output redirections (`>`, `>>`, `&>`, `<>`, …)
 * and the destinations of the common writing programs (`tee`, `cp`/`mv`/`install`/`ln`/`rsync`,
 * `sed -i`/`perl -i`, `dd of=`, `touch`, editors). Reading is not writing: `source ~/.bashrc`,
 * `. ~/.profile` and `--config ~/.ssh/config` write nothing. Also the commands a command runs
 * (`find -exec …`), a shell reading its script from standard input (`… | sh`) and the text a
 * command hands on (`echo`, `printf`, `<<<`), and the functions a script defines. Pure; the words
 * arrive with quotes removed (shell_words.ts).
 */
import { baseName, COMMAND_FLAG, isShell } from "./shell_unwrap.ts";
import { type Redirect, unescapeC } from "./shell_words.ts";

const WRITE_OPS = new Set([">", ">>", ">|", ">&", "&>", "&>>", "<>"]);
/** Programs whose last operand (or `-t DIR`) is the destination. */
const COPIERS = new Set(["cp", "mv", "install", "ln", "rsync", "scp"]);
/** Programs that write every operand. */
const WRITE_ALL = new Set(["tee", "touch", "truncate", "ed", "ex", "vi", "vim", "nano", "emacs"]);
/** In-place editors: every operand when given `-i` (sed, perl: `-i`, `-i.bak`, `-pi`, `--in-place`). */
const IN_PLACE = new Set(["sed", "gsed", "perl"]);

const operands = (args: readonly string[]) => args.filter((a) => !a.startsWith("-") || a === "-");

/** A redirection target that is a file (not `2>&1`'s descriptor, not `>&-`). */
function fileTarget(r: Redirect): string | undefined {
  if (!WRITE_OPS.has(r.op)) return undefined;
  if (r.op === ">&" && /^(?:\d+|-)$/.test(r.target)) return undefined;
  return r.target;
}

/** The files `argv` (wrappers already peeled off) and its redirections write to. */
export function writtenFiles(argv: readonly string[], redirects: readonly Redirect[]): string[] {
  const out = redirects.flatMap((r) => fileTarget(r) ?? []);
  if (!argv.length) return out;
  const name = baseName(argv[0]).replace(/\.exe$/, "");
  const args = argv.slice(1);
  if (WRITE_ALL.has(name)) out.push(...operands(args));
  else if (COPIERS.has(name)) {
    const t = args.findIndex((a) => a === "-t" || a === "--target-directory");
    const eq = args.find((a) => a.startsWith("--target-directory="));
    const ops = operands(args);
    if (t >= 0 && args[t + 1]) out.push(args[t + 1]);
    else if (eq) out.push(eq.slice(eq.indexOf("=") + 1));
    else if (ops.length >= 2) out.push(ops[ops.length - 1]);
  } else if (IN_PLACE.has(name) && args.some((a) => /^-[a-z]*i/.test(a) || a.startsWith("--in-place"))) {
    out.push(...operands(args));
  } else if (name === "dd") {
    out.push(...args.filter((a) => a.startsWith("of=")).map((a) => a.slice(3)));
  }
  return out;
}

/** `crontab` installing or editing a table (anything but listing it). */
export function installsCrontab(argv: readonly string[]): boolean {
  if (!argv.length || baseName(argv[0]) !== "crontab") return false;
  const args = argv.slice(1).filter((a, i, all) => a !== "-u" && all[i - 1] !== "-u");
  return !(args.length === 1 && args[0] === "-l");
}

/** Scripts a builtin runs now or later: `eval …`, `trap 'ACTION' SIGNAL`, `alias NAME='TEXT'`. */
export function scriptsRun(argv: readonly string[]): string[] {
  const name = argv.length ? baseName(argv[0]) : "";
  const args = argv.slice(1);
  if (name === "eval") return [args.join(" ")];
  if (name === "alias") {
    return args.filter((a) => /^[^=\s]+=/.test(a)).map((a) => a.slice(a.indexOf("=") + 1));
  }
  const trap = args[0] === "--" ? args.slice(1) : args;
  return name === "trap" && trap.length >= 2 && !trap[0].startsWith("-") ? [trap[0]] : [];
}

/** Commands `argv` runs itself: `find … -exec CMD … ;` (and `-execdir`, `-ok`, `-okdir`). */
export function commandsRun(argv: readonly string[]): string[][] {
  if (!argv.length || baseName(argv[0]) !== "find") return [];
  const out: string[][] = [];
  for (let i = 1; i < argv.length; i++) {
    if (!/^-(?:exec|execdir|ok|okdir)$/.test(argv[i])) continue;
    const stop = argv.findIndex((a, j) => j > i && (a === ";" || a === "+"));
    out.push(argv.slice(i + 1, stop < 0 ? argv.length : stop));
    if (stop > 0) i = stop;
  }
  return out;
}

/** Standard input as a file name. */
const STDIN_FILE = /^(?:-|\/dev\/stdin|\/dev\/fd\/0|\/proc\/self\/fd\/0)$/;

/** A shell that reads its script from standard input: `sh`, `bash -s`, `sh -`, `. /dev/stdin`. */
export function readsScriptFromStdin(argv: readonly string[]): boolean {
  if (!argv.length) return false;
  const name = baseName(argv[0]);
  const args = argv.slice(1);
  if (name === "." || name === "source") return STDIN_FILE.test(args[0] ?? "");
  if (!isShell(argv[0]) || args.some((a) => COMMAND_FLAG.test(a))) return false;
  const ops = operands(args);
  return args.includes("-s") || ops.length === 0 || STDIN_FILE.test(ops[0]);
}

/** Text a command hands on to whatever reads its output: `echo`/`printf` arguments, a `<<<` string. */
export function textHandedOn(argv: readonly string[], redirects: readonly Redirect[]): string[] {
  const out = redirects.filter((r) => r.op === "<<<").map((r) => r.target);
  const text = printed(argv);
  if (text !== undefined) {
    const args = argv.slice(1).filter((a) => !/^-[neE]+$/.test(a));
    out.push(text, args.join(" "), ...args);
  }
  return out;
}

/** What `echo` or `printf` prints (its escapes decoded, its format applied); undefined for others. */
export function printed(argv: readonly string[]): string | undefined {
  const name = argv.length ? baseName(argv[0]) : "";
  let args = argv.slice(1);
  if (name === "echo") {
    let n = 0;
    while (n < args.length && /^-[neE]+$/.test(args[n])) n++;
    const flags = args.slice(0, n).join("");
    const text = args.slice(n).join(" ");
    return (flags.includes("e") ? unescapeC(text) : text) + (flags.includes("n") ? "" : "\n");
  }
  if (name !== "printf" || args[0] === "-v") return undefined;
  if (args[0] === "--") args = args.slice(1);
  const [format = "", ...values] = args;
  let out = "";
  let i = 0;
  do {
    const used = i;
    out += format.split(/(%[-+ #0]*\d*(?:\.\d+)?[a-zA-Z%])/).map((part, k) => {
      if (k % 2 === 0) return unescapeC(part);
      if (part === "%%") return "%";
      const v = values[i++] ?? "";
      return part.endsWith("b") ? unescapeC(v) : part.endsWith("c") ? v.slice(0, 1) : v;
    }).join("");
    if (i === used) break;
  } while (i < values.length);
  return out;
}

/** The names of the functions a script defines (`f() {…}`, `function f {…}`). */
export function definedFunctions(script: string): Set<string> {
  const names = [...script.matchAll(/(?:^|[\s;&|(){}])(?:function\s+)?([A-Za-z_][\w.-]*)\s*\(\s*\)/g)]
    .map((m) => m[1]);
  names.push(...[...script.matchAll(/\bfunction\s+([A-Za-z_][\w.-]*)/g)].map((m) => m[1]));
  return new Set(names);
}
