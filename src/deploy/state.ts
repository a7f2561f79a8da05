/**
 * The record of what hermit wrote in one scope (`<project>/.hermit/deployed.json` for deploy,
 * `deployed.json` in hermit's state directory for convert): each item with its owners
 * (`<adapter>/<host>`), a hash of what was written (to tell a user's later edit), what it replaced
 * (to put back on `--remove`), and per file what the first write created (the file, containers,
 * `{}` insides), plus directories hermit created. This is what makes `--remove` exact.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { HermitError } from "../errors.ts";
import type { ConfigFormat } from "../hosts/types.ts";

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
}

export function emptyState(): DeployState {
  return { version: 1, items: [], files: {}, dirs: [] };
}

export function loadState(file: string): DeployState {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return emptyState();
  }
  try {
    const s = JSON.parse(text) as DeployState;
    if (s.version !== 1 || !Array.isArray(s.items) || typeof s.files !== "object" || !Array.isArray(s.dirs)) {
      throw new Error("unknown shape");
    }
    return s;
  } catch {
    throw new HermitError(`${file} is not a hermit deploy record; restore it from its backup or delete it`);
  }
}

export function isEmptyState(s: DeployState): boolean {
  return s.items.length === 0 && s.dirs.length === 0 && Object.keys(s.files).length === 0;
}

export function itemKey(i: { kind: string; file: string; path?: string[]; id?: string }): string {
  return [i.kind, i.file, ...(i.path ?? [i.id ?? ""])].join("\0");
}

/** A path as kept in the record: relative to `root` when inside it. */
export function toStored(root: string, abs: string): string {
  const rel = path.relative(root, abs);
  return rel && !rel.startsWith("..") && !path.isAbsolute(rel) ? rel : abs;
}

export function fromStored(root: string, stored: string): string {
  return path.resolve(root, stored);
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
