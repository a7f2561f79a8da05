/**
 * Reading the record from disk (`loadState`): a missing file is an empty record; what is not one
 * (not JSON, a folder, a FIFO, a file where its folder should be) or not of the shape hermit
 * writes (a cloned project's record may hold anything: `recordProblem`) is refused in one line
 * naming the record and the field.
 */
import path from "node:path";
import { statSync } from "node:fs";
import { Exit, HermitError } from "../errors.ts";
import { NotAFile, readBytes } from "../hosts/files.ts";
import { type DeployState, dict, emptyState, type FileRecord, itemKey, type ItemRecord } from "./state.ts";

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
