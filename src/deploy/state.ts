/**
 * The record of what hermit wrote in one scope (`<project>/.hermit/deployed.json` for deploy,
 * `deployed.json` in hermit's state directory for convert): each item with its owners
 * (`<adapter>/<host>`), a hash of what was written (to tell a user's later edit), what it replaced
 * (to put back on `--remove`), and per file what the first write created (the file, containers,
 * `{}` insides), plus directories hermit created. This is what makes `--remove` exact. Its paths
 * (stored relative to the scope's root) and hashes; reading one from disk is record_read.ts.
 */
import { createHash } from "node:crypto";
import path from "node:path";
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

/** `m` without a prototype: a key read from a record ("constructor", "toString") is only its own. */
export function dict<T>(m: Record<string, T>): Record<string, T> {
  return Object.assign(Object.create(null) as Record<string, T>, m);
}

export function emptyState(): DeployState {
  return { version: 1, items: [], files: dict({}), dirs: [] };
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
