/**
 * `hermit.lock` on disk: YAML beside `hermit.yaml`, meant to be committed and read in review.
 * Rendering is deterministic (servers, tools and every key of a definition sorted; multi-line
 * descriptions as literal blocks, so a changed sentence is a changed line in `git diff`; hidden
 * Unicode written as `\u` escapes, never invisibly). Reading validates the shape and that every
 * entry's hash matches its definition (a hand-edited definition is an invalid lock, not a
 * silently different one) and that a package is one exact version of a registry name; it is read
 * capped, from a regular file only. Depends on `yaml` only: the lean relay can load it.
 */
import { statSync } from "node:fs";
import path from "node:path";
import { Document, isScalar, parse, visit } from "yaml";
import { Exit, HermitError } from "../errors.ts";
import { CANDIDATE as HIDDEN, CANDIDATES as HIDDEN_ALL } from "../gates/unicode.ts";
import { writeFileAtomic } from "../platform/atomic_write.ts";
import { setOwn } from "../platform/own.ts";
import {
  describeBytes,
  FileTooLarge,
  MiB,
  NotAFile,
  NotUtf8,
  readTextCapped,
} from "../platform/read_capped.ts";
import { definitionOf, hashDefinition } from "./definition.ts";
import { exactVersion, registryOf } from "./packages.ts";
import {
  type Lock,
  LOCK_FILE,
  LOCK_FORMAT,
  type LockedPackage,
  type LockedServer,
  type LockState,
  RUNNERS,
} from "./types.ts";

const HEADER = [
  "# hermit.lock: what this adapter's upstream servers resolved to, and the definition of every",
  "# tool it serves from them. Written by 'hermit lock'; review its diff and commit it with",
  "# hermit.yaml. A tool whose definition differs from its entry here is not served until",
  "# 'hermit lock' accepts the change.",
];

export function lockPath(adapterDir: string): string {
  return path.join(adapterDir, LOCK_FILE);
}

/** The most a lock may hold (a real one is kilobytes: tool definitions, not data). */
export const MAX_LOCK_BYTES = 4 * MiB;

/**
 * The lock of the adapter in `adapterDir`: none, one, or why it cannot be used. Read capped and
 * without blocking (every reader comes here, a running gateway's poll too): a FIFO, a link to a
 * device or to stdin, or a huge file is an invalid lock, never a hang or a read into memory.
 */
export function readLockState(adapterDir: string): LockState {
  let text: string;
  try {
    text = readTextCapped(lockPath(adapterDir), MAX_LOCK_BYTES, { regularOnly: true });
  } catch (err) {
    if (err instanceof NotAFile) return { kind: "invalid", why: `not a regular file but a ${err.kind}` };
    if (err instanceof FileTooLarge) {
      const cap = describeBytes(MAX_LOCK_BYTES);
      const why = err.size === undefined ? `more than the ${cap}` : `${err.size} bytes, over the ${cap}`;
      return { kind: "invalid", why: `${why} a lock may hold` };
    }
    if (err instanceof NotUtf8) return { kind: "invalid", why: `not UTF-8 text (line ${err.line})` };
    const code = (err as NodeJS.ErrnoException).code;
    return code === "ENOENT"
      ? { kind: "none" }
      : { kind: "invalid", why: `cannot be read (${code ?? "error"})` };
  }
  const parsed = parseLock(text);
  return "lock" in parsed ? { kind: "ok", lock: parsed.lock } : { kind: "invalid", why: parsed.why };
}

/** What identifies the lock file's current content cheaply (changes when it is rewritten). */
export function lockStamp(adapterDir: string): string {
  try {
    const s = statSync(lockPath(adapterDir));
    return `${s.ino}:${s.size}:${s.mtimeMs}`;
  } catch {
    return "absent";
  }
}

const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

/** Pure: the lock in `text`, or one line saying what is wrong (naming the key). */
export function parseLock(text: string): { lock: Lock } | { why: string } {
  let raw: unknown;
  try {
    raw = parse(text, { logLevel: "error" });
  } catch (err) {
    return { why: `not valid YAML: ${(err as Error).message.split("\n")[0]}` };
  }
  if (!isObj(raw)) return { why: "it does not hold a mapping" };
  if (raw.format !== LOCK_FORMAT) {
    return {
      why: `format must be ${LOCK_FORMAT} (this hermit writes format ${LOCK_FORMAT}), got ${
        JSON.stringify(raw.format)
      }`,
    };
  }
  if (!isObj(raw.servers)) return { why: "servers must be a mapping" };
  const servers: Record<string, LockedServer> = {};
  for (const [name, s] of Object.entries(raw.servers)) {
    const at = `servers.${name}`;
    if (!isObj(s)) return { why: `${at} must be a mapping` };
    if (!isObj(s.tools)) return { why: `${at}.tools must be a mapping` };
    const pkg = s.package;
    if (
      pkg !== undefined &&
      !(isObj(pkg) && (RUNNERS as readonly unknown[]).includes(pkg.runner) && typeof pkg.name === "string" &&
        typeof pkg.version === "string")
    ) {
      return { why: `${at}.package must be { runner: ${RUNNERS.join("|")}, name, version }` };
    }
    const bad = pkg &&
      (badPackage(pkg as unknown as LockedPackage) ?? badExtras(pkg as Record<string, unknown>) ??
        badRegistry((pkg as Record<string, unknown>).registry));
    if (bad) return { why: `${at}.package.${bad}` };
    for (const key of ["url", "command"] as const) {
      if (s[key] !== undefined && typeof s[key] !== "string") return { why: `${at}.${key} must be a string` };
    }
    const info = s.server_info;
    if (
      info !== undefined &&
      !(isObj(info) && typeof info.name === "string" && typeof info.version === "string")
    ) {
      return { why: `${at}.server_info must be { name, version }` };
    }
    const tools: LockedServer["tools"] = {};
    for (const [tool, t] of Object.entries(s.tools)) {
      const tat = `${at}.tools.${tool}`;
      if (!isObj(t) || typeof t.sha256 !== "string" || !isObj(t.definition)) {
        return { why: `${tat} must hold sha256 and definition` };
      }
      if (t.definition.name !== tool) return { why: `${tat}.definition.name must be '${tool}'` };
      const definition = definitionOf(t.definition as { name: string });
      if (hashDefinition(definition) !== t.sha256) {
        return { why: `${tat}: sha256 does not match its definition (edited by hand?)` };
      }
      setOwn(tools, tool, { sha256: t.sha256, definition });
    }
    const locked = pkg as LockedPackage | undefined;
    setOwn(servers, name, {
      ...(locked
        ? {
          package: {
            runner: locked.runner,
            name: locked.name,
            version: locked.version,
            ...(locked.with ? { with: extrasOf(locked.with) } : {}),
            ...(locked.registry ? { registry: [...locked.registry] } : {}),
          },
        }
        : {}),
      ...(s.url !== undefined ? { url: s.url as string } : {}),
      ...(s.command !== undefined ? { command: s.command as string } : {}),
      ...(info ? { server_info: info as LockedServer["server_info"] } : {}),
      tools,
    });
  }
  return { lock: { format: LOCK_FORMAT, servers } };
}

/** npm: `name` or `@scope/name`, url-safe, not starting with `.` or `_` (legacy capitals kept). */
const NPM_NAME = /^(?:@[a-z0-9~-][a-z0-9._~-]*\/)?[a-z0-9~-][a-z0-9._~-]*$/i;
/** PyPI: letters, digits, `.` `_` `-` (beginning and ending with a letter or digit), extras kept. */
const PYPI_NAME =
  /^[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?(?:\[\s*(?:[a-z0-9][a-z0-9._-]*(?:\s*,\s*[a-z0-9][a-z0-9._-]*)*)?\s*\])?$/i;

/** JSR: `@scope/name`, lower case, digits and `-`. */
const JSR_NAME = /^jsr:@[a-z0-9][a-z0-9-]*\/[a-z0-9][a-z0-9-]*$/;

/** What is wrong with a package entry (`version …`, `name …`), or undefined when it can be pinned. */
function badPackage(p: LockedPackage): string | undefined {
  const shown = (v: string) => JSON.stringify(v.length > 60 ? `${v.slice(0, 60)}…` : v);
  const registry = registryOf(p.runner, p.name);
  const npm = registry !== "pypi";
  // the lock's hashes cover the tools, not this: the only check a hand-edited package gets
  if (!exactVersion(p.runner, p.version) || p.version.length > 256) {
    return `version ${shown(p.version)} is not one exact version (${npm ? "semver" : "PEP 440"}, as 1.2.3)`;
  }
  const named = registry === "jsr"
    ? JSR_NAME.test(p.name)
    : (npm ? NPM_NAME : PYPI_NAME).test(p.runner === "deno" ? p.name.replace(/^npm:/, "") : p.name);
  if (!named || p.name.length > 214) {
    return `name ${shown(p.name)} is not ${
      { npm: "an npm", pypi: "a PyPI", jsr: "a JSR" }[registry]
    } package name`;
  }
  return undefined;
}

/** uv's `with`: a mapping of PyPI names to one exact version each, only beside a uvx package. */
function badExtras(p: Record<string, unknown>): string | undefined {
  if (p.with === undefined) return undefined;
  if (p.runner !== "uvx" || !isObj(p.with)) {
    return "with must be a mapping of package to version, for uvx only";
  }
  for (const [name, version] of Object.entries(p.with)) {
    const bad = badPackage({ runner: "uvx", name, version: typeof version === "string" ? version : "" });
    if (bad) return `with.${bad}`;
  }
  return undefined;
}

/** `registry`: a list of `SETTING=url` strings (what the entry's env and options said). */
function badRegistry(v: unknown): string | undefined {
  const ok = v === undefined ||
    (Array.isArray(v) && v.every((s) => typeof s === "string" && /^[^=\s]+=/.test(s)));
  return ok ? undefined : "registry must be a list of SETTING=url";
}

function extrasOf(raw: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, version] of Object.entries(raw)) setOwn(out, name, version);
  return out;
}

/** Keys sorted at every level (arrays keep their order). */
function sortDeep(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortDeep);
  if (!isObj(v)) return v;
  return Object.fromEntries(
    Object.keys(v).sort().filter((k) => v[k] !== undefined).map((k) => [k, sortDeep(v[k])]),
  );
}

/** Pure: the lock as the text `hermit lock` writes. */
export function renderLock(lock: Lock): string {
  const body = {
    format: LOCK_FORMAT,
    servers: Object.fromEntries(
      Object.keys(lock.servers).sort().map((name) => {
        const s = lock.servers[name];
        return [name, {
          ...(s.package
            ? {
              package: {
                runner: s.package.runner,
                name: s.package.name,
                version: s.package.version,
                ...(s.package.with ? { with: sortDeep(s.package.with) } : {}),
                ...(s.package.registry?.length ? { registry: [...s.package.registry].sort() } : {}),
              },
            }
            : {}),
          ...(s.url !== undefined ? { url: s.url } : {}),
          ...(s.command !== undefined ? { command: s.command } : {}),
          ...(s.server_info
            ? { server_info: { name: s.server_info.name, version: s.server_info.version } }
            : {}),
          tools: Object.fromEntries(
            Object.keys(s.tools).sort().map((t) => [t, {
              sha256: s.tools[t].sha256,
              definition: sortDeep(s.tools[t].definition),
            }]),
          ),
        }];
      }),
    ),
  };
  const doc = new Document(body);
  // strings holding hidden characters are double-quoted, so the escapes below are valid YAML
  visit(doc, {
    Scalar(_key, node) {
      if (isScalar(node) && typeof node.value === "string" && HIDDEN.test(node.value)) {
        node.type = "QUOTE_DOUBLE";
      }
    },
  });
  const yaml = doc.toString({ lineWidth: 0 }).replace(HIDDEN_ALL, (c) => {
    const cp = c.codePointAt(0)!;
    return cp > 0xffff
      ? `\\U${cp.toString(16).toUpperCase().padStart(8, "0")}`
      : `\\u${cp.toString(16).toUpperCase().padStart(4, "0")}`;
  });
  return [...HEADER, yaml].join("\n");
}

/**
 * The text `writeLock` writes. A lock this hermit would refuse to read (a package version that ran
 * but is not one exact version) is an error here, exit 3: written, it would withhold every tool.
 */
export function lockText(lock: Lock): string {
  const text = renderLock(lock);
  const back = parseLock(text);
  if ("why" in back) throw new HermitError(`hermit.lock not written: ${back.why}`, Exit.problems);
  return text;
}

/** Write the lock (or its `lockText`) beside hermit.yaml, atomically (0644: it is meant to be committed). */
export function writeLock(adapterDir: string, lock: Lock | string): void {
  writeFileAtomic(lockPath(adapterDir), typeof lock === "string" ? lock : lockText(lock), { mode: 0o644 });
}
