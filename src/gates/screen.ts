/**
 * Gate 1, config screening: refuse entries that match the shapes of known attacks before they can
 * run. The IOC blocklist (the June 2026 hermes-0day campaign) anywhere in the entry; the
 * network-egress shape and the persistence shape when the command is a shell interpreter, after
 * unwrapping wrappers (shell_unwrap.ts). A POSIX shell's payload is read as the shell reads it
 * (shell_words.ts: quotes and escapes removed, so `c''url` is `curl`): egress is a command that
 * reaches the network (a path component such as `/opt/nc/server` is not a command) or a
 * `/dev/tcp/` path; persistence is a write to a login file, SSH keys, cron and the like (reading
 * is not writing: `source ~/.bashrc` passes, `>> ~/.bashrc` does not). Nested shells,
 * substitutions, `eval`, `find -exec` and base64 tokens (`echo … | base64 -d | sh`) are followed;
 * the arguments after a `-c` script are its positional parameters, read where it expands them
 * (`sh -c '"$@"' _ curl …`), and `${X:-word}` is read as its word (shell_expand.ts); text handed
 * to a shell on standard input (`echo 'curl …' | sh`) is read as a script, and the arguments of a
 * call to a function the script defines as a command (its body may run `"$@"`).
 * cmd and PowerShell payloads are searched as text, as Hermes does. This is the first line; the
 * sandbox is the wall, so no attempt is made to out-guess every encoding. Pure: argv in, verdict
 * out.
 */
import {
  commandsRun,
  definedFunctions,
  installsCrontab,
  readsScriptFromStdin,
  textHandedOn,
  writtenFiles,
} from "./shell_effects.ts";
import { expandText, expandWord, type ShellParams, updateParams, usesParameterList } from "./shell_expand.ts";
import { ASSIGNMENT, baseName, findShell, splitCommand, unwrap } from "./shell_unwrap.ts";
import { parseShell, type Redirect, type SimpleCommand } from "./shell_words.ts";

export { SHELL_INTERPRETERS, splitCommand, unwrap } from "./shell_unwrap.ts";

/** Substrings that refuse an entry outright (hermes.md section 15); compared case-insensitively. */
export const IOC_SUBSTRINGS = [
  "AAAAC3NzaC1lZDI1NTE5AAAAICBoh1oDC4DnsO1m5mJ4yfEKrQebaFh",
  "hermes-0day",
  "60.165.167.",
  "118.182.244.156",
  "61.178.123.196",
] as const;

/** Hermes's `_EGRESS_PATTERN`, plus PowerShell aliases and .NET clients, Windows download tools, telnet, /dev/udp. */
export const EGRESS_PATTERN =
  /(?<![\w.-])(?:curl|wget|nc|ncat|socat|telnet|iwr|irm|bitsadmin)(?![\w.-])|\/dev\/(?:tcp|udp)\/|\bInvoke-WebRequest\b|\bInvoke-RestMethod\b|\bStart-BitsTransfer\b|\b(?:System\.)?Net\.(?:WebClient|Http\.HttpClient|Sockets\.TcpClient)\b|\bcertutil\b.*-urlcache|\bopenssl\s+s_client\b/i;
/** Hermes's `_EXFIL_HINT_PATTERN`: only adds words to the reason. */
export const EXFIL_HINT_PATTERN = /\.env\b|--data-binary|--data-raw|\b-X\s+POST\b|\bPOST\b|<\s*[^\s]+/;
/** Hermes's `_PERSISTENCE_PATTERN`, plus the other login files, preload, autostart and scheduled tasks. */
export const PERSISTENCE_PATTERN =
  /authorized_keys|\.ssh\/|\/etc\/ssh\b|\/etc\/pam\.d\b|pam_[\w-]+\.so|\/etc\/sudoers|\/etc\/cron|crontab\b|\/etc\/rc\.local|\/etc\/systemd|\.bashrc\b|\.bash_profile\b|\.profile\b|\.zshrc\b|\.zprofile\b|\/etc\/profile\b|\/etc\/ld\.so\.preload|\.config\/autostart|\/Library\/Launch(?:Agents|Daemons)|\\CurrentVersion\\Run|\bschtasks\b|\$PROFILE\b/i;

export interface ScreenInput {
  /** The command as written (may hold arguments: Hermes splits it with shlex). */
  command?: string;
  args?: readonly string[];
  /** Values of env, headers, url, cwd: searched for IOCs only. */
  values?: readonly string[];
}

export type ScreenVerdict = { refused: false } | {
  refused: true;
  shape: "ioc" | "egress" | "persistence";
  reason: string;
};

/** Text hidden in base64 tokens of a payload (UTF-8 or UTF-16LE, as PowerShell encodes it). */
function decodeBase64Tokens(script: string): string {
  const out: string[] = [];
  for (const m of script.matchAll(/[A-Za-z0-9+/]{16,}={0,2}/g)) {
    let bytes: Uint8Array;
    try {
      bytes = Uint8Array.from(
        atob(m[0].length % 4 ? m[0].slice(0, m[0].length - (m[0].length % 4)) : m[0]),
        (c) => c.charCodeAt(0),
      );
    } catch {
      continue;
    }
    for (const enc of ["utf-8", "utf-16le"]) {
      const text = new TextDecoder(enc).decode(bytes);
      if (/^[\t\n\r\x20-\x7e]+$/.test(text)) out.push(text);
    }
  }
  return out.join("\n");
}

type Shape = "egress" | "persistence";
interface Finding {
  shape: Shape;
  /** What matched: `curl`, `/dev/tcp/`, `.bashrc`, … */
  what: string;
  /** Found only after decoding base64. */
  encoded: boolean;
}

/** Shells whose payload is not POSIX shell (cmd, PowerShell): searched as text, as Hermes does. */
const TEXT_SHELLS = /^(?:cmd|powershell|pwsh)(?:\.exe)?$/;
/** How deep nested shells, substitutions and `eval`s are followed. */
const MAX_DEPTH = 8;
const DEV_NET = /\/dev\/(?:tcp|udp)\//i;
/** The egress shape at a command's start: `curl …`, `openssl s_client …`, `certutil … -urlcache`. */
const EGRESS_COMMAND = new RegExp(`^(?:${EGRESS_PATTERN.source})`, "i");
/** Words that may stand where a command name does without being one. */
const RESERVED = new Set(
  "if then else elif fi do done while until case esac for select function coproc { } ! [[ ]]".split(" "),
);
const DECLARERS = new Set(["export", "local", "declare", "typeset", "readonly"]);
const NO_PARAMS = (): ShellParams => ({ vars: new Map(), positional: [] });
/** A POSIX shell's "run this": `-c`, `-lc`, `-xec`, … */
const POSIX_COMMAND_FLAG = /^-[a-zA-Z]*c[a-zA-Z]*$/;

function screenArgv(argv: readonly string[]): ScreenVerdict {
  const { argv: inner, wrappers } = unwrap(argv);
  const found = findShell(inner);
  if (!found) return { refused: false };
  const f = shellFinding(found.shell, found.script, 0);
  if (!f) return { refused: false };
  const via = wrappers.length ? ` (via ${wrappers.join(", ")})` : "";
  const note = f.encoded ? " (base64-encoded)" : "";
  if (f.shape === "egress") {
    const exfil = EXFIL_HINT_PATTERN.test(found.script.join(" ")) ? " and exfiltration-shaped arguments" : "";
    return {
      refused: true,
      shape: "egress",
      reason: `${found.shell}${via} payload has network egress ('${f.what}')${note}${exfil}`,
    };
  }
  return {
    refused: true,
    shape: "persistence",
    reason: `${found.shell}${via} payload writes to ${f.what}${note} (the hermes-0day backdoor shape)`,
  };
}

/** What a shell run with `args` would do that screening refuses. */
function shellFinding(shell: string, args: readonly string[], depth: number): Finding | undefined {
  if (depth > MAX_DEPTH) return undefined;
  if (TEXT_SHELLS.test(shell)) return textFinding(unescapeText(shell, args.join(" ")));
  const dev = args.map((a) => DEV_NET.exec(a)).find((m) => m);
  if (dev) return { shape: "egress", what: dev[0], encoded: false };
  const flag = args.findIndex((a) => POSIX_COMMAND_FLAG.test(a) || a === "--command");
  const at = flag < 0 ? -1 : args.findIndex((a, i) => i > flag && !/^[-+]/.test(a));
  if (at < 0) return undefined;
  const params: ShellParams = { vars: new Map(), positional: args.slice(at + 1) };
  const f = scriptFinding(args[at], params, depth, false);
  // a script that runs its parameter list in a way this reading loses: the list as a command
  if (f || !usesParameterList(args[at])) return f;
  return argvFinding(unwrap(args.slice(at + 2)).argv, [], depth + 1, false);
}

/** cmd's `^` and PowerShell's backtick escape letters; an empty pair of quotes joins words. */
function unescapeText(shell: string, text: string): string {
  const joined = text.replace(/""|''/g, "");
  return shell.startsWith("cmd") ? joined.replace(/\^(.)/g, "$1") : joined.replace(/`([A-Za-z])/g, "$1");
}

/** cmd and PowerShell payloads: the shapes anywhere in the text, then in its base64 tokens. */
function textFinding(text: string): Finding | undefined {
  for (const [t, encoded] of [[text, false], [decodeBase64Tokens(text), true]] as const) {
    const egress = EGRESS_PATTERN.exec(t);
    if (egress) return { shape: "egress", what: egress[0], encoded };
    const persist = PERSISTENCE_PATTERN.exec(t);
    if (persist) return { shape: "persistence", what: persist[0], encoded };
  }
  return undefined;
}

/** One simple command as it runs: words expanded, wrappers peeled off. */
interface Resolved {
  argv: string[];
  redirects: Redirect[];
}

/** A POSIX shell script: each simple command, each substitution, and what hides in base64. */
function scriptFinding(
  script: string,
  params: ShellParams,
  depth: number,
  encoded: boolean,
): Finding | undefined {
  if (depth > MAX_DEPTH) return undefined;
  const parsed = parseShell(script);
  const positional = [...params.positional];
  const resolved: Resolved[] = [];
  for (const c of parsed.commands) {
    const f = commandFinding(c, params, depth, encoded, resolved);
    if (f) return f;
  }
  const f = handedOnFinding(script, resolved, depth, encoded);
  if (f) return f;
  const inner = { vars: params.vars, positional };
  for (const sub of parsed.substitutions) {
    const f = scriptFinding(sub, inner, depth + 1, encoded);
    if (f) return f;
  }
  const decoded = encoded ? "" : decodeBase64Tokens(script);
  return decoded ? scriptFinding(decoded, inner, depth + 1, true) : undefined;
}

/** What a script hands to a shell on standard input, and what it passes to its own functions. */
function handedOnFinding(
  script: string,
  resolved: readonly Resolved[],
  depth: number,
  encoded: boolean,
): Finding | undefined {
  const functions = definedFunctions(script);
  const stdinShell = resolved.some((r) => readsScriptFromStdin(r.argv));
  for (const r of resolved) {
    if (functions.has(r.argv[0])) {
      const f = argvFinding(unwrap(r.argv.slice(1)).argv, [], depth + 1, encoded);
      if (f) return f;
    }
    for (const text of stdinShell ? textHandedOn(r.argv, r.redirects) : []) {
      const f = scriptFinding(text, NO_PARAMS(), depth + 1, encoded);
      if (f) return f;
    }
  }
  return undefined;
}

function commandFinding(
  c: SimpleCommand,
  params: ShellParams,
  depth: number,
  encoded: boolean,
  resolved: Resolved[],
): Finding | undefined {
  // variables the script set (`F=~/.bashrc; echo x >> $F`) and its parameters are followed
  const vars = params.vars;
  let words = c.words.flatMap((w) => expandWord(w, params));
  const redirects = c.redirects.map((r) => ({ op: r.op, target: expandText(r.target, params) }));
  const dev = [...words, ...redirects.map((r) => r.target)].map((w) => DEV_NET.exec(w)).find((m) => m);
  if (dev) return { shape: "egress", what: dev[0], encoded };
  while (words.length && RESERVED.has(words[0])) words = words.slice(1);
  const assign = (w: string) => vars.set(w.slice(0, w.indexOf("=")), w.slice(w.indexOf("=") + 1));
  while (words.length && ASSIGNMENT.test(words[0])) assign(words.shift()!);
  if (words.length && DECLARERS.has(words[0])) {
    words.slice(1).filter((w) => ASSIGNMENT.test(w)).forEach(assign);
    words = [];
  }
  updateParams(words, params);
  const argv = unwrap(words).argv;
  resolved.push({ argv, redirects });
  return argvFinding(argv, redirects, depth, encoded);
}

function argvFinding(
  argv: readonly string[],
  redirects: readonly Redirect[],
  depth: number,
  encoded: boolean,
): Finding | undefined {
  for (const target of writtenFiles(argv, redirects)) {
    const persist = PERSISTENCE_PATTERN.exec(`${target}/`); // a directory written into: `-t ~/.ssh`
    if (persist) return { shape: "persistence", what: persist[0], encoded };
  }
  if (!argv.length || depth > MAX_DEPTH) return undefined;
  if (installsCrontab(argv)) return { shape: "persistence", what: "crontab", encoded };
  const shell = findShell(argv);
  if (shell) {
    const f = shellFinding(shell.shell, shell.script, depth + 1);
    if (f) return { ...f, encoded: f.encoded || encoded };
  }
  const name = baseName(argv[0]).replace(/\.exe$/, "");
  const egress = EGRESS_COMMAND.exec([name, ...argv.slice(1)].join(" "));
  if (egress) return { shape: "egress", what: egress[0], encoded };
  if (name === "eval") return scriptFinding(argv.slice(1).join(" "), NO_PARAMS(), depth + 1, encoded);
  for (const sub of commandsRun(argv)) {
    const f = argvFinding(unwrap(sub).argv, [], depth + 1, encoded);
    if (f) return f;
  }
  return undefined;
}

export function screen(input: ScreenInput): ScreenVerdict {
  const args = input.args ?? [];
  const haystack = [...(input.command !== undefined ? [input.command] : []), ...args, ...(input.values ?? [])]
    .map((s) => s.toLowerCase());
  for (const ioc of IOC_SUBSTRINGS) {
    if (haystack.some((s) => s.includes(ioc.toLowerCase()))) {
      return {
        refused: true,
        shape: "ioc",
        reason: `contains a known attack indicator of the hermes-0day campaign ('${ioc}')`,
      };
    }
  }
  // hermit runs `command` as one program path; Hermes (and a reader) may split it: screen both
  // readings when they differ
  const readings = [[...args]];
  if (input.command !== undefined) {
    const words = splitCommand(input.command);
    readings[0] = [...words, ...args];
    if (words.length !== 1 || words[0] !== input.command) readings.push([input.command, ...args]);
  }
  for (const argv of readings) {
    const v = screenArgv(argv);
    if (v.refused) return v;
  }
  return { refused: false };
}
