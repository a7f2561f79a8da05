/**
 * What runs, under the wrappers: the shell interpreters, and peeling `env`, `timeout`, `nice`,
 * `nohup`, `stdbuf`, `sudo`, `command`, `builtin`, `exec` and similar wrappers (with their options and
 * `NAME=value` prefixes) off the front of an argv, so screening (gate 1) sees the program that
 * really runs (Hermes skips this: its open #63904). A shell behind a wrapper hermit does not know
 * is still found when it is given a command flag (`… sh -c '…'`, `… cmd /c …`). Pure.
 */

/**
 * Hermes's `_SHELL_INTERPRETERS`, plus the other shells that take `-c` (restricted, Korn, Almquist
 * and POSIX variants; `su`/`runuser`, which run one). A version after the name counts too
 * (`bash5.2`, `zsh-5.9`); `busybox sh` is unwrapped to `sh`.
 */
export const SHELL_INTERPRETERS: readonly string[] = (
  "bash sh zsh dash fish cmd cmd.exe powershell powershell.exe pwsh pwsh.exe " +
  "ksh mksh ash csh tcsh bash.exe sh.exe zsh.exe su runuser " +
  "rbash rzsh rksh ksh93 pdksh oksh lksh yash posh hush bsh jsh"
).split(" ");
/** A versioned shell name: `bash5.2`, `zsh-5.9`, `ksh2020`. */
const VERSIONED = /^([a-z]+)-?\d[\d.]*(?:\.exe)?$/;

/**
 * Wrappers: their options that take a value, positional operands before the command, and when
 * the rest is itself run by a shell (`always`, or only given one of the `shell` options).
 */
interface WrapperSpec {
  valued: string[];
  positional?: number;
  shell?: "always" | string[];
}
const spec = (valued: string, more: Omit<WrapperSpec, "valued"> = {}): WrapperSpec => ({
  valued: valued ? valued.split(" ") : [],
  ...more,
});
const WRAPPERS: Record<string, WrapperSpec> = {
  env: spec("-u --unset -C --chdir -S --split-string"),
  timeout: spec("-s --signal -k --kill-after", { positional: 1 }),
  nice: spec("-n --adjustment"),
  nohup: spec(""),
  stdbuf: spec("-i -o -e --input --output --error"),
  sudo: spec(
    "-u --user -g --group -C --close-from -D --chdir -h --host -p --prompt -r --role -t --type " +
      "-T --command-timeout -U --other-user",
    { shell: ["-s", "--shell", "-i", "--login"] },
  ),
  doas: spec("-u -C"),
  command: spec(""),
  builtin: spec(""),
  exec: spec("-a"),
  setsid: spec(""),
  time: spec("-f --format -o --output"),
  ionice: spec("-c --class -n --classdata -t"),
  chrt: spec("", { positional: 1 }),
  taskset: spec("", { positional: 1 }),
  chroot: spec("--userspec --groups", { positional: 1 }),
  unshare: spec(""),
  nsenter: spec("-t --target"),
  strace: spec("-o -e -p -s -u -E"),
  ltrace: spec("-o -e -p -s -u"),
  xargs: spec("-a --arg-file -d --delimiter -E -I -L -n --max-args -P --max-procs -s --max-chars"),
  flock: spec("-w --timeout -E --conflict-exit-code", { positional: 1, shell: ["-c", "--command"] }),
  watch: spec("-n --interval -d", { shell: "always" }),
  "systemd-run": spec("-p --property -u --unit -E --setenv --working-directory --uid --gid"),
  caffeinate: spec("-t -w"),
  busybox: spec(""),
};

/** The wrapper named `name`, if it is one (`constructor` is not: only the table's own keys). */
const wrapperOf = (name: string): WrapperSpec | undefined =>
  Object.hasOwn(WRAPPERS, name) ? WRAPPERS[name] : undefined;

export function baseName(cmd: string): string {
  return cmd.split(/[\\/]/).pop()!.toLowerCase();
}

export const isShell = (word: string): boolean => SHELL_INTERPRETERS.includes(shellName(baseName(word)));

/** A program's name without a version (`bash5.2` is `bash`); other names as they are. */
function shellName(name: string): string {
  const m = VERSIONED.exec(name);
  return m && SHELL_INTERPRETERS.includes(m[1]) ? m[1] : name;
}
export const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;
/** How a shell is told "run this": `-c`, `-lc`, `/c`, `-Command`, `-EncodedCommand`, … */
export const COMMAND_FLAG =
  /^(?:-[a-z]*c[a-z]*|--command|\/[ck]|-(?:e|ec|enc|encodedcommand|command)(?:[:=].*)?)$/i;

/**
 * Split a command string roughly as shlex would (quotes, backslash escapes). A backslash is an
 * escape only before a quote, a backslash or white space, so `C:\Windows\cmd.exe` stays a path.
 */
export function splitCommand(s: string): string[] {
  const out: string[] = [];
  let cur = "";
  let quote: string | undefined;
  let has = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    const escapes = c === "\\" && i + 1 < s.length && /["'\\\s]/.test(s[i + 1]);
    if (quote) {
      if (c === quote) quote = undefined;
      else if (escapes && quote === '"') cur += s[++i];
      else cur += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      has = true;
    } else if (escapes) {
      cur += s[++i];
      has = true;
    } else if (/\s/.test(c)) {
      if (has) out.push(cur);
      cur = "";
      has = false;
    } else {
      cur += c;
      has = true;
    }
  }
  if (has) out.push(cur);
  return out;
}

/** Drop wrapper programs (and their options, and `NAME=value` prefixes) from the front of argv. */
export function unwrap(argv: readonly string[]): { argv: string[]; wrappers: string[] } {
  let rest = skipAssignments([...argv]);
  const wrappers: string[] = [];
  for (let guard = 0; guard < 32 && rest.length > 0; guard++) {
    const name = baseName(rest[0]).replace(/\.exe$/, "");
    const w = wrapperOf(name);
    if (!w) break;
    wrappers.push(name);
    rest = rest.slice(1);
    let viaShell = w.shell === "always";
    if (name === "env") rest = skipEnv(rest);
    else {
      while (rest.length && rest[0].startsWith("-") && rest[0] !== "-") {
        const opt = rest[0];
        rest = rest.slice(1);
        if (opt === "--") break;
        if (Array.isArray(w.shell) && w.shell.includes(opt)) {
          viaShell = true;
          if (opt === "-c" || opt === "--command") break; // what follows is the script
        } else if (w.valued.includes(opt)) rest = rest.slice(1);
      }
      if (w.positional && !(viaShell && name === "flock")) rest = rest.slice(w.positional);
      if (name === "flock" && rest[0] && /^(?:-c|--command)$/.test(rest[0])) {
        viaShell = true;
        rest = rest.slice(1);
      }
    }
    rest = skipAssignments(rest);
    if (viaShell && rest.length && !isShell(rest[0]) && !wrapperOf(baseName(rest[0]).replace(/\.exe$/, ""))) {
      rest = ["sh", "-c", rest.join(" ")];
    }
  }
  return { argv: rest, wrappers };
}

function skipAssignments(rest: string[]): string[] {
  let i = 0;
  while (i < rest.length && ASSIGNMENT.test(rest[i])) i++;
  return rest.slice(i);
}

function skipEnv(rest: string[]): string[] {
  while (rest.length) {
    const a = rest[0];
    if (a === "--") return rest.slice(1);
    if (a === "-S" || a === "--split-string") return splitCommand(rest[1] ?? "").concat(rest.slice(2));
    if (a.startsWith("--split-string=")) return splitCommand(a.slice(15)).concat(rest.slice(1));
    // `#!/usr/bin/env -S bash -c …` hands env the whole line as one argument
    if (/^-[a-zA-Z]*S/.test(a)) return splitCommand(a.slice(a.indexOf("S") + 1)).concat(rest.slice(1));
    if (["-u", "--unset", "-C", "--chdir"].includes(a)) rest = rest.slice(2);
    else if (a.startsWith("-") || ASSIGNMENT.test(a)) rest = rest.slice(1);
    else break;
  }
  return rest;
}

/** The shell and its payload in `argv` (after unwrapping), if a shell runs one. */
export function findShell(argv: readonly string[]): { shell: string; script: string[] } | undefined {
  if (argv.length && isShell(argv[0])) return { shell: shellName(baseName(argv[0])), script: argv.slice(1) };
  for (let i = 1; i < argv.length; i++) {
    if (!isShell(argv[i])) continue;
    for (let j = i + 1; j < argv.length && /^[-/]/.test(argv[j]); j++) {
      if (COMMAND_FLAG.test(argv[j])) {
        return { shell: shellName(baseName(argv[i])), script: argv.slice(i + 1) };
      }
    }
  }
  return undefined;
}
