/**
 * What deploy and convert take from an adapter: the launch (the hermit binary's absolute path and
 * `serve.command`'s arguments, with the adapter directory made absolute, the default `.` included,
 * and `./…`, `../…` words resolved against the adapter; or a remote URL with the token named,
 * never included), the context text, the skill directories file by file, and the roles. A
 * `serve.command` whose DIR holds no adapter is not written anywhere (`serveTargetMissing`), nor is
 * a launch a host would read part of as its own variable (`expandedByHosts`).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import {
  contextPath,
  isFile,
  listRoles,
  listSkills,
  readAdapterDoc,
  skillFiles,
  unreadable,
} from "../adapter/content.ts";
import { usageError } from "../errors.ts";
import { HOSTS } from "../hosts/index.ts";
import type { AdapterParts, HostId, Launch, SkillFiles } from "../hosts/types.ts";
import { TOKEN_VAR } from "../hosts/types.ts";
import { quote } from "../manifest/locate.ts";
import type { Manifest } from "../manifest/types.ts";
import { cleartextServeUrl, parseServeUrl } from "../service/access.ts";

/** `serve.command` as words (single and double quotes group, as in a shell). */
export function splitWords(line: string): string[] {
  const out: string[] = [];
  for (const m of line.matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g)) {
    out.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, "$1") : m[2] ?? m[3]);
  }
  return out;
}

/** `hermit serve` options that take a value (the next word, unless written `--opt=value`). */
const SERVE_VALUE_OPTIONS = [
  "--port",
  "--host",
  "--token-file",
  "--allowed-host",
  "--allowed-origin",
  "--serve-url",
];

/** What a host session may pass `hermit serve` besides DIR: a relay to a service elsewhere. */
const SESSION_OPTIONS = ["--serve-url", "--token-file"];

/**
 * Why `serve …` words (`words[0]` is `serve`) cannot be a host session's command line, or
 * undefined: an option `hermit serve` does not take, one that starts the shared service instead of
 * a session (`--standalone`: that is `serve.lifecycle`), a value missing, more than one DIR, or a
 * token sent to a `--serve-url` on plain http to another host.
 * Each makes every host session started with it fail. Pure.
 */
export function serveWordsProblem(words: string[]): string | undefined {
  let dirs = 0;
  const given = new Map<string, string>();
  for (let i = 1; i < words.length; i++) {
    const w = words[i];
    if (w === "--") {
      dirs += words.length - i - 1;
      break;
    }
    if (!w.startsWith("-") || w === "-") {
      dirs++;
      continue;
    }
    const name = w.split("=")[0];
    if (!SESSION_OPTIONS.includes(name)) {
      return SERVE_VALUE_OPTIONS.includes(name) || ["--standalone", "--daemon"].includes(name)
        ? `passes ${name}, which starts the shared service rather than a host session, so every host session started with it fails; a host runs 'hermit serve DIR' (a shared service is serve.lifecycle: standalone): command: hermit serve .`
        : `passes ${name}, which hermit serve does not take, so every host session started with it fails: command: hermit serve .`;
    }
    if (!w.includes("=") && (++i >= words.length || words[i].startsWith("-"))) {
      return `passes ${name} without its value, so every host session started with it fails`;
    }
    given.set(name, w.includes("=") ? w.slice(w.indexOf("=") + 1) : words[i]);
  }
  const url = URL.parse(given.get("--serve-url") ?? "");
  const cleartext = url && given.has("--token-file") &&
    cleartextServeUrl(url, "every host session started with it");
  if (cleartext) return `passes --serve-url ${url.href}, ${cleartext}`;
  return dirs > 1
    ? "passes more than one DIR, so every host session started with it fails: command: hermit serve ."
    : undefined;
}

/** Where DIR is among `serve …` words (`words[0]` is `serve`): its index, or -1 when it is left out. */
function dirIndex(words: string[]): number {
  for (let i = 1; i < words.length; i++) {
    const w = words[i];
    if (w === "--") return i + 1 < words.length ? i + 1 : -1;
    if (!w.startsWith("-")) return i;
    if (SERVE_VALUE_OPTIONS.includes(w)) i++;
  }
  return -1;
}

/** The directory (or manifest file) `serve.command` serves, absolute: DIR is relative to the adapter. */
export function serveTarget(m: Manifest): string {
  const words = splitWords(m.serve.command).slice(1);
  const at = dirIndex(words);
  return at < 0 ? m.dir : path.resolve(m.dir, words[at]);
}

/**
 * Why `serve.command` cannot start this adapter, or undefined: its DIR (relative to the adapter)
 * holds no hermit.yaml, so every host session started with it would fail. Check reports it as a
 * problem; deploy and convert refuse to write it.
 */
export function serveTargetMissing(m: Manifest): string | undefined {
  const wrong = serveWordsProblem(splitWords(m.serve.command).slice(1));
  if (wrong) return `serve.command ${quote(m.serve.command)} ${wrong}`;
  const target = serveTarget(m);
  if (target === m.dir || target === m.file) return undefined;
  if (isFile(path.join(target, "hermit.yaml")) || isFile(target)) return undefined;
  return `serve.command ${
    quote(m.serve.command)
  } serves ${target}, where there is no hermit.yaml, so a host started with it fails; its DIR is relative to the adapter: command: hermit serve .`;
}

export function stdioLaunch(m: Manifest, self: string[]): Launch {
  const words = splitWords(m.serve.command).slice(1); // `hermit` → the binary
  const args = words.map((w) => /^\.\.?[\\/]/.test(w) ? path.resolve(m.dir, w) : w);
  const at = dirIndex(words);
  // The host starts hermit in a directory of its own: DIR must not depend on it.
  if (at < 0) args.splice(1, 0, m.dir);
  else args[at] = path.resolve(m.dir, words[at]);
  return { kind: "stdio", command: self[0], args: [...self.slice(1), ...args] };
}

/**
 * The words of the launch hermit made (the binary's path, the adapter directory, paths made
 * absolute, the URL) that one of `hosts` would read as a variable of its own (`HostSpec.expands`:
 * `${HOME}` for Claude Code, `$HOME` for Gemini CLI, `{env:HOME}` for OpenCode) and so start
 * something else, one line each; a word `serve.command` has as written is the author's to mean.
 */
export function expandedByHosts(m: Manifest, launch: Launch, hosts: readonly HostId[]): string[] {
  const written = new Set(splitWords(m.serve.command));
  const words = launch.kind === "stdio" ? [launch.command, ...launch.args] : [launch.url];
  const out: string[] = [];
  for (const w of words.filter((w) => !written.has(w))) {
    const by = hosts.filter((h) => HOSTS[h].expands?.test(w));
    if (by.length === 0) continue;
    const what = w.match(HOSTS[by[0]].expands!)![0];
    const titles = by.map((h) => HOSTS[h].title);
    const who = titles.length === 1
      ? `${titles[0]} reads`
      : `${titles.slice(0, -1).join(", ")} and ${titles.at(-1)} read`;
    out.push(
      `${
        quote(w)
      } holds ${what}, which ${who} as a variable in an MCP server's command, so it would start something else; move or rename it, or leave ${
        by.join(", ")
      } out of --host`,
    );
  }
  return out;
}

export function remoteLaunch(url: string): Launch {
  return { kind: "remote", url: parseServeUrl(url, "hosts").href, tokenVar: TOKEN_VAR };
}

function skills(m: Manifest): SkillFiles[] {
  return listSkills(m).map((doc) => {
    const dir = path.dirname(doc.file);
    return {
      name: path.basename(dir),
      files: skillFiles(m, dir).map((rel) => ({
        rel,
        content: new Uint8Array(readFileSync(path.join(dir, rel))),
      })),
    };
  });
}

export function adapterParts(m: Manifest, launch: Launch): AdapterParts {
  const ctx = contextPath(m);
  let context: string | undefined;
  if (ctx) {
    try {
      context = readAdapterDoc(ctx);
    } catch (err) {
      throw usageError(
        `exports.context names ${path.relative(m.dir, ctx)}, which ${unreadable(err)}; check ${m.dir}`,
      );
    }
  }
  return {
    name: m.name,
    dir: m.dir,
    launch,
    context,
    skills: skills(m),
    roles: listRoles(m),
    tools: m.exports.tools,
  };
}
