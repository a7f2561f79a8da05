/**
 * Gate 1, config screening: refuse entries that match the shapes of known attacks before they can
 * run. The IOC blocklist (the June 2026 hermes-0day campaign) anywhere in the entry; the
 * network-egress shape and the persistence shape when the command is a shell interpreter, after
 * unwrapping wrappers (shell_unwrap.ts). A POSIX shell's payload is read as the shell reads it
 * (shell_words.ts: quotes and escapes removed, so `c''url` is `curl`; shell_command.ts: each
 * simple command's words expanded, the assignments before it taken): egress is a command that
 * reaches the network (a path component such as `/opt/nc/server` is not a command) or a
 * `/dev/tcp/` path; persistence is a write to a login file, SSH keys, cron and the like (reading
 * is not writing: `source ~/.bashrc` passes, `>> ~/.bashrc` does not). Nested shells,
 * substitutions, `eval`, `find -exec` and base64 tokens (`echo … | base64 -d | sh`) are followed;
 * the arguments after a `-c` script are its positional parameters, read where it expands them
 * (`sh -c '"$@"' _ curl …`), and `${X:-word}` is read as its word (shell_expand.ts); text handed
 * to a shell on standard input (`echo 'curl …' | sh`, here-documents, `sh <(echo …)`) is read as
 * a script, and the arguments of a call to a function the script defines as a command (its body
 * may run `"$@"`). What a payload runs out of screening's sight is refused as `opaque`
 * (shell_opaque.ts): a command name split by a custom `IFS` or set by `read`, and a shell reading
 * a script that is not in the manifest from its standard input (`bash -s`, `prog | sh`); a shape
 * screening recognizes is reported before it. cmd and PowerShell payloads are searched as text,
 * as Hermes does. This is the first line; the sandbox is the wall, so no attempt is made to
 * out-guess every encoding. Pure: argv in, verdict out.
 */
import {
  commandsRun,
  definedFunctions,
  installsCrontab,
  readsScriptFromStdin,
  scriptsRun,
  textHandedOn,
  writtenFiles,
} from "./shell_effects.ts";
import { dropPrefix, expandCommand } from "./shell_command.ts";
import {
  inputFrom,
  noParams,
  noteLoop,
  type ShellParams,
  updateParams,
  usesParameterList,
} from "./shell_expand.ts";
import {
  globbedTool,
  noteSplitParameters,
  type Resolved,
  runsStdin,
  scriptSubstitution,
  STDIN_SCRIPT,
  substitutionScript,
  unreadCommand,
  unreadStdin,
} from "./shell_opaque.ts";
import {
  decodeBase64Tokens,
  EGRESS_PATTERN,
  EGRESS_TOOLS,
  type Finding,
  findingReason,
  IOC_SUBSTRINGS,
  opaque,
  PERSISTENCE_PATTERN,
  type RefusalShape,
  settled,
  TEXT_SHELLS,
  textFinding,
  unescapeText,
  worse,
} from "./screen_shapes.ts";
import { baseName, findShell, splitCommand, unwrap } from "./shell_unwrap.ts";
import { parseShell, type Redirect, type SimpleCommand } from "./shell_words.ts";

export { EGRESS_PATTERN, EXFIL_HINT_PATTERN, IOC_SUBSTRINGS, PERSISTENCE_PATTERN } from "./screen_shapes.ts";
export { SHELL_INTERPRETERS, splitCommand, unwrap } from "./shell_unwrap.ts";

export interface ScreenInput {
  /** The command as written (may hold arguments: Hermes splits it with shlex). */
  command?: string;
  args?: readonly string[];
  /** Values of env, headers, url, cwd: searched for IOCs only. */
  values?: readonly string[];
}

export type ScreenVerdict = { refused: false } | {
  refused: true;
  shape: RefusalShape;
  reason: string;
};

/** How deep nested shells, substitutions and `eval`s are followed. */
const MAX_DEPTH = 8;
const DEV_NET = /\/dev\/(?:tcp|udp)\//i;
/** The egress shape at a command's start: `curl …`, `openssl s_client …`, `certutil … -urlcache`. */
const EGRESS_COMMAND = new RegExp(`^(?:${EGRESS_PATTERN.source})`, "i");
/** A POSIX shell's "run this": `-c`, `-lc`, `-xec`, … */
const POSIX_COMMAND_FLAG = /^-[a-zA-Z]*c[a-zA-Z]*$/;

function screenArgv(argv: readonly string[]): ScreenVerdict {
  const { argv: inner, wrappers } = unwrap(argv);
  const found = findShell(inner);
  if (!found) return { refused: false };
  // a shell with no script reads it from its standard input: the call's arguments, the host's messages
  const f = shellFinding(found.shell, found.script, 0) ??
    (readsScriptFromStdin(inner) ? opaque(STDIN_SCRIPT, false) : undefined);
  if (!f) return { refused: false };
  const via = wrappers.length ? ` (via ${wrappers.join(", ")})` : "";
  return { refused: true, shape: f.shape, reason: findingReason(`${found.shell}${via}`, f, found.script) };
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
  const f = scriptFinding(args[at], noParams(args.slice(at + 1)), depth, false);
  // a script that runs its parameter list in a way this reading loses: the list as a command
  if (settled(f) || !usesParameterList(args[at])) return f;
  return worse(f, argvFinding(unwrap(args.slice(at + 2)).argv, [], depth + 1, false));
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
  let found: Finding | undefined;
  for (const c of parsed.commands) {
    found = worse(found, commandFinding(c, params, depth, encoded, resolved));
    if (settled(found)) return found;
  }
  found = worse(found, handedOnFinding(script, resolved, depth, encoded));
  const inner = { ...params, positional };
  for (const sub of settled(found) ? [] : parsed.substitutions) {
    found = worse(found, scriptFinding(sub, inner, depth + 1, encoded));
    if (settled(found)) return found;
  }
  const decoded = encoded || settled(found) ? "" : decodeBase64Tokens(script);
  return worse(found, decoded ? scriptFinding(decoded, inner, depth + 1, true) : undefined);
}

/**
 * What a script hands to a shell on standard input or as `<(…)`, and what it passes to its own
 * functions; a shell whose script is not in the manifest is opaque.
 */
function handedOnFinding(
  script: string,
  resolved: readonly Resolved[],
  depth: number,
  encoded: boolean,
): Finding | undefined {
  const functions = definedFunctions(script);
  const stdinAt = resolved.flatMap((r, i) => runsStdin(r) ? [i] : []);
  let found: Finding | undefined;
  for (const r of resolved) {
    if (functions.has(r.argv[0])) {
      found = worse(found, argvFinding(unwrap(r.argv.slice(1)).argv, [], depth + 1, encoded));
    }
    const sub = scriptSubstitution(r);
    const subScript = sub === undefined ? undefined : substitutionScript(sub);
    // `source <(prog)` passes as `eval "$(prog)"` does (pyenv init, ssh-agent); a shell's is opaque
    if (sub !== undefined && subScript === undefined && r.argv[0] !== "source" && r.argv[0] !== ".") {
      found = worse(found, opaque(`a script from '${sub}'`, encoded));
    }
    const texts = [
      ...(stdinAt.length ? textHandedOn(r.argv, r.redirects) : []),
      ...(subScript ? [subScript] : []),
    ];
    for (const text of texts) found = worse(found, scriptFinding(text, noParams(), depth + 1, encoded));
    if (settled(found)) return found;
  }
  for (const i of stdinAt) {
    const why = unreadStdin(resolved, i);
    if (why) found = worse(found, opaque(why, encoded));
  }
  return found;
}

function commandFinding(
  c: SimpleCommand,
  params: ShellParams,
  depth: number,
  encoded: boolean,
  resolved: Resolved[],
): Finding | undefined {
  const expanded = expandCommand(c, params);
  const dev = [...expanded.words, ...expanded.redirects.map((r) => r.target)].map((w) => DEV_NET.exec(w))
    .find((m) => m);
  if (dev) return { shape: "egress", what: dev[0], encoded };
  noteLoop(expanded.words, params);
  const { words, origins, redirects } = dropPrefix(expanded, params);
  noteSplitParameters(words, origins, params);
  updateParams(words, params, !c.piped && inputFrom(redirects) === "<");
  const argv = unwrap(words).argv;
  const origin = words.length >= argv.length && argv.length ? origins[words.length - argv.length] : undefined;
  resolved.push({ argv, redirects, piped: !!c.piped, words });
  let f = argvFinding(argv, redirects, depth, encoded);
  // a loop variable as the command: each word it takes
  const loop = origin && /^\$\{?([A-Za-z_]\w*)\}?$/.exec(origin.word);
  for (const item of loop ? (params.loops.get(loop[1]) ?? []).slice(0, 16) : []) {
    if (settled(f)) break;
    f = worse(f, argvFinding(unwrap([item, ...argv.slice(1)]).argv, redirects, depth, encoded));
  }
  const why = settled(f) || !argv.length ? undefined : unreadCommand(argv[0], origin, params);
  return worse(f, why ? opaque(why, encoded) : undefined);
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
  // `nc.openbsd` and `nc.traditional` are netcat's names on Debian and Ubuntu
  const name = baseName(argv[0]).replace(/\.exe$/, "").replace(/^nc\.(?:openbsd|traditional)$/, "nc");
  const egress = EGRESS_COMMAND.exec([name, ...argv.slice(1)].join(" ")) ?? [globbedTool(name, EGRESS_TOOLS)];
  if (egress[0]) return { shape: "egress", what: egress[0], encoded };
  for (const script of scriptsRun(argv)) {
    const f = scriptFinding(script, noParams(), depth + 1, encoded);
    if (f) return f;
  }
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
