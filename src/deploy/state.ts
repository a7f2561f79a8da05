/**
 * The record of what hermit wrote in one scope (`<project>/.hermit/deployed.json` for deploy,
 * `deployed.json` in hermit's state directory for convert): each item with its owners
 * (`<adapter>/<host>`), a hash of what was written (to tell a user's later edit), what it replaced
 * (to put back on `--remove`), and per file what the first write created (the file, containers,
 * `{}` insides), plus directories hermit created. This is what makes `--remove` exact.
 */
import { createHash } from "node:crypto";
import path from "node:path";
import { statSync } from "node:fs";
import { Exit, HermitError } from "../errors.ts";
import { NotAFile, readBytes } from "../hosts/files.ts";
import type { ConfigFormat, Scope } from "../hosts/types.ts";

export interface FileRecord {
  /** The file did not exist before hermit wrote it. */
  created: boolean;
  /** The file held only whitespace (this) before. */
  blank?: string;
  containers: string[][];
  interiors: Record<string, string>;
}

export interface ItemRecord {
  kind: "entry" | "block" | "file";
  /** Relative to the scope's root when inside it, else absolute. */
  file: string;
  format?: ConfigFormat;
  path?: string[];
  id?: string;
  /** What it is, for reports ("MCP server notes", "skill take-notes"). */
  what: string;
  owners: string[];
  hash: string;
  /** What was there before (raw text; base64 for whole files): put back on removal. */
  previous?: string;
}

export interface DeployState {
  version: 1;
  items: ItemRecord[];
  files: Record<string, FileRecord>;
  dirs: string[];
  /** The directory each adapter name on record was deployed from (two of one name are two adapters). */
  adapters?: Record<string, string>;
}

export function emptyState(): DeployState {
  return { version: 1, items: [], files: dict({}), dirs: [] };
}

/**
 * The record in `file`; a missing file is an empty record, any other failure an error. What is
 * not a record (not JSON, a folder, a FIFO, a file where its folder should be) is bad input.
 */
export function loadState(file: string): DeployState {
  let bytes: Uint8Array | undefined;
  try {
    bytes = readBytes(file);
  } catch (err) {
    throw unreadableRecord(file, err);
  }
  if (bytes === undefined) {
    refuseFileForFolder(path.dirname(file));
    return emptyState();
  }
  let s: unknown;
  try {
    s = JSON.parse(new TextDecoder().decode(bytes));
  } catch { /* said below */ }
  const problem = s === undefined ? "" : recordProblem(s);
  if (problem === undefined) return ownKeysOnly(s as DeployState);
  throw new HermitError(
    `${file} is not a hermit deploy record${
      problem ? ` (${problem})` : ""
    }; repair it, or delete it (hermit then no longer knows what it wrote: its entries count as the user's own)`,
    Exit.usage,
  );
}

/** Why the record in `file` cannot be read, in one line. */
function unreadableRecord(file: string, err: unknown): HermitError {
  if (err instanceof HermitError) return err; // a link to nothing
  if (err instanceof NotAFile) {
    return new HermitError(
      `${file}: not a regular file (${err.kind}); hermit keeps its deploy record only in a regular file: remove it and run again`,
      Exit.usage,
    );
  }
  const code = (err as NodeJS.ErrnoException).code ?? "error";
  if (code === "EISDIR") {
    return new HermitError(
      `${file} is a folder; hermit's deploy record is a file: move the folder away and run again`,
      Exit.usage,
    );
  }
  return new HermitError(
    `cannot read hermit's deploy record ${file} (${code}); make it readable and try again`,
  );
}

/** The record's folder `dir` (or one it would be made in) being a file is refused: writing fails. */
function refuseFileForFolder(dir: string): void {
  for (let d = dir; path.dirname(d) !== d; d = path.dirname(d)) {
    try {
      if (statSync(d).isDirectory()) return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR") continue; // missing, or a file above it: look there
      return; // unreadable: writing says so
    }
    throw new HermitError(
      `${d} is a file; hermit keeps its deploy record in a folder there: move the file away and run again`,
      Exit.usage,
    );
  }
}

/** `m` without a prototype: a key read from a record ("constructor", "toString") is only its own. */
function dict<T>(m: Record<string, T>): Record<string, T> {
  return Object.assign(Object.create(null) as Record<string, T>, m);
}

/**
 * The record's maps, keyed by what a project's file says (a path, an adapter name), made plain
 * dictionaries: `files["constructor"]` must be nothing, not Object's constructor (it crashed a
 * removal with "error: unexpected", and made an adapter named `constructor` a conflict).
 */
function ownKeysOnly(s: DeployState): DeployState {
  const files = dict<FileRecord>({});
  for (const [k, f] of Object.entries(s.files)) files[k] = { ...f, interiors: dict(f.interiors) };
  s.files = files;
  if (s.adapters) s.adapters = dict(s.adapters);
  return s;
}

const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === "string");
const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);
const FORMATS = ["json", "yaml", "toml"];
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
type Problem = string | undefined;
/** A path from the record, on one line whatever it holds. */
const oneLine = (p: string) => /[\p{C}\p{Zl}\p{Zp}]/u.test(p) ? JSON.stringify(p) : p;

/**
 * A key path as hermit records one (an entry's, a container's): keys inside the document. `[]`
 * would be the document itself, which no editor removes (JSON: "removed" while all of it stayed;
 * YAML: a crash); whether hermit created the file is `created`. Pure.
 */
function keyPathProblem(p: unknown, at: string): Problem {
  if (!isStrings(p)) return `${at} is not a list of keys`;
  if (p.length === 0) return `${at} is [], the whole document; hermit records only keys inside it`;
}

/** The first field of the item at `at` not as hermit writes it (a cloned project's record may hold anything). Pure. */
function itemProblem(i: unknown, at: string): Problem {
  if (!isObject(i)) return `${at} is not an object`;
  for (const k of ["file", "what", "hash"]) if (typeof i[k] !== "string") return `${at}.${k} is not a string`;
  if (!isStrings(i.owners)) return `${at}.owners is not a list of strings`;
  if (i.previous !== undefined && typeof i.previous !== "string") return `${at}.previous is not a string`;
  if (i.kind === "entry") {
    if (!FORMATS.includes(i.format as string)) return `${at}.format is not json, yaml or toml`;
    return keyPathProblem(i.path, `${at}.path`);
  }
  if (i.kind === "block") return typeof i.id === "string" ? undefined : `${at}.id is not a string`;
  if (i.kind !== "file") return `${at}.kind is not entry, block or file`;
  if (i.previous !== undefined && !BASE64.test(i.previous as string)) return `${at}.previous is not base64`;
}

/** The same for what the record notes of one file. Pure. */
function fileProblem(f: unknown, at: string): Problem {
  if (!isObject(f)) return `${at} is not an object`;
  if (typeof f.created !== "boolean") return `${at}.created is not true or false`;
  // put back as the file once it is empty again: only what hermit notes, whitespace
  if (f.blank !== undefined && (typeof f.blank !== "string" || f.blank.trim() !== "")) {
    return `${at}.blank is not whitespace`;
  }
  if (!Array.isArray(f.containers)) return `${at}.containers is not a list`;
  for (const [n, c] of f.containers.entries()) {
    const problem = keyPathProblem(c, `${at}.containers[${n}]`);
    if (problem) return problem;
  }
  if (!isObject(f.interiors) || !Object.values(f.interiors).every((v) => typeof v === "string")) {
    return `${at}.interiors is not a map of strings`;
  }
}

/** What first keeps `s` from having the record's shape throughout (undefined: nothing). Pure. */
export function recordProblem(s: unknown): Problem {
  if (!isObject(s)) return "not an object";
  if (s.version !== 1) return "version is not 1";
  if (!Array.isArray(s.items)) return "items is not a list";
  const keys = new Map<string, number>();
  for (const [n, i] of s.items.entries()) {
    const problem = itemProblem(i, `items[${n}]`);
    if (problem) return problem;
    // one item per place: hermit adds owners to it (two would be removed, and reported, twice)
    const key = itemKey(i as ItemRecord);
    if (keys.has(key)) {
      return `items[${n}] is for the same place in ${oneLine((i as ItemRecord).file)} as items[${
        keys.get(key)
      }]`;
    }
    keys.set(key, n);
  }
  if (!isObject(s.files)) return "files is not a map";
  for (const [k, f] of Object.entries(s.files)) {
    const problem = fileProblem(f, `files[${JSON.stringify(k)}]`);
    if (problem) return problem;
  }
  if (!isStrings(s.dirs)) return "dirs is not a list of strings";
  if (
    s.adapters !== undefined &&
    !(isObject(s.adapters) && Object.values(s.adapters).every((d) => typeof d === "string"))
  ) {
    return "adapters is not a map of strings";
  }
}

/**
 * The conflict of deploying or removing the adapter `name` from `dir` when the record has that name
 * from another directory (none with `force`: the adapter moved). Pure.
 */
export function adapterConflict(
  state: DeployState,
  name: string,
  dir: string,
  force: boolean,
): string | undefined {
  const had = state.adapters && Object.hasOwn(state.adapters, name) ? state.adapters[name] : undefined;
  if (had === undefined || had === dir || force) return undefined;
  return `the adapter '${name}' here was deployed from ${had}; ${dir} has the same name: rename one of them (name: in hermit.yaml), or --force if it is the same adapter moved`;
}

/**
 * Note (or forget, when nothing of it is left) the directory the adapter `name` came from
 * (`undefined`: a removal by the name on record, which keeps what the record says).
 */
export function noteAdapter(state: DeployState, name: string, dir: string | undefined): void {
  const adapters = dict(state.adapters ?? {});
  if (!state.items.some((r) => r.owners.some((o) => o.startsWith(`${name}/`)))) delete adapters[name];
  else if (dir !== undefined) adapters[name] = dir;
  if (Object.keys(adapters).length) state.adapters = adapters;
  else delete state.adapters;
}

export function isEmptyState(s: DeployState): boolean {
  return s.items.length === 0 && s.dirs.length === 0 && Object.keys(s.files).length === 0;
}

export function itemKey(i: { kind: string; file: string; path?: string[]; id?: string }): string {
  return [i.kind, i.file, ...(i.path ?? [i.id ?? ""])].join("\0");
}

/** A path as kept in the record: relative to `root` when inside it, else absolute. */
export function toStored(root: string, abs: string): string {
  const rel = path.relative(root, abs);
  return rel && !rel.startsWith("..") && !path.isAbsolute(rel) ? rel : abs;
}

/** A path as reports show it: like the record, with `~/` for the user's home (convert). */
export function displayIn(root: string, file: string, scope: Scope): string {
  const stored = toStored(root, file);
  if (path.isAbsolute(stored)) return stored;
  return scope === "user" ? `~/${stored}` : stored;
}

export function fromStored(root: string, stored: string): string {
  return path.resolve(root, stored);
}

/** True when the recorded directory `dir` holds a file of one of the record's items. Pure. */
export function holdsItem(state: DeployState, root: string, dir: string): boolean {
  const abs = fromStored(root, dir);
  return state.items.some((r) => !path.relative(abs, fromStored(root, r.file)).startsWith(".."));
}

/**
 * Forget the recorded directories that hold none of the record's items: hermit notes a folder it
 * made for a file and lets it go (removed when empty) with the last item in it, so any other (a
 * planted or stale one: the user's empty folder) is not hermit's to remove.
 */
export function forgetStrayDirs(state: DeployState, root: string): void {
  state.dirs = state.dirs.filter((d) => holdsItem(state, root, d));
}

export function sha256(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** A hash of a JSON value that ignores key order. */
export function valueHash(value: unknown): string {
  const canon = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canon)
      : v !== null && typeof v === "object"
      ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon((v as Record<string, unknown>)[k])]))
      : v;
  return sha256(JSON.stringify(canon(value)));
}
