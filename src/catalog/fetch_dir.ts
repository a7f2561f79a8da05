/**
 * The private directory a package fetch runs in (`warm.ts`), and the removal of those a killed
 * `hermit add` left behind. Its name says whose it is: `hermit-fetch-PID-START-XXXXXX`, the owner's
 * pid and a tag of its start time (so a reused pid is told apart), made by mkdtemp (mode 0700). The
 * fetch's process group is written into it once known (`FETCH_GROUP_FILE`). Before it makes its
 * own, a fetch removes every stale one in the same temporary directory, which is one that is
 *  - named like one of hermit's (the name alone, never what it points to: a symlink is skipped),
 *  - a directory owned by this user that no one else may enter (mode 0700), and
 *  - no longer in use: its owner is gone (dead, or its pid reused) and so is its fetch's group,
 *    which the watchdog ends within its grace period after the owner is killed.
 * Two `hermit add` running at once each see the other's owner alive and leave its directory be.
 * Directories from a hermit that did not put its owner in the name (`hermit-fetch-XXXXXX`) are
 * removed once a day old and holding nothing but the empty `package.json`.
 */
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { groupAlive, isAlive, processStartTime } from "../platform/proc.ts";
import { sha256Hex } from "../platform/sha256.ts";

const PREFIX = "hermit-fetch-";
/** Inside a fetch directory: the pid of the fetch's process group, once it started. */
export const FETCH_GROUP_FILE = ".hermit-fetch-group";
/** A directory of the old naming (no owner in it) this old was left by a kill. */
export const LEGACY_STALE_MS = 24 * 60 * 60 * 1000;

/** The tag of a process start time in a fetch directory's name; "0" when it is unknown (pure). */
export function startTag(start: string | undefined): string {
  return start === undefined ? "0" : sha256Hex(start).slice(0, 8);
}

/** The owner named in a fetch directory's name; "legacy" for the old naming, else undefined (pure). */
export function fetchDirOwner(name: string): { pid: number; tag: string } | "legacy" | undefined {
  const m = /^hermit-fetch-(\d+)-([0-9a-f]{8}|0)-[A-Za-z0-9]{6}$/.exec(name);
  if (m) return { pid: Number(m[1]), tag: m[2] };
  return /^hermit-fetch-[A-Za-z0-9]{6}$/.test(name) ? "legacy" : undefined;
}

/** Is the owner gone: its pid dead, or since reused by a process that started at another time? */
function ownerGone(owner: { pid: number; tag: string }): boolean {
  const start = processStartTime(owner.pid);
  if (start === undefined) return !isAlive(owner.pid);
  return owner.tag !== "0" && startTag(start) !== owner.tag;
}

/** Is the fetch started in `dir` still running (any process left in its group)? */
function fetchRunning(dir: string): boolean {
  let text: string;
  try {
    const file = path.join(dir, FETCH_GROUP_FILE);
    if (!lstatSync(file).isFile()) return true; // not what hermit writes: hands off
    text = readFileSync(file, "utf8");
  } catch {
    return false; // no group written: the owner died before its fetch started
  }
  const pgid = Number(text.trim());
  return !Number.isInteger(pgid) || pgid <= 1 || groupAlive(pgid);
}

/** Only package.json in it (what the old naming's fetch left)? */
function onlyPackageJson(dir: string): boolean {
  const names = readdirSync(dir);
  return names.length === 0 || (names.length === 1 && names[0] === "package.json");
}

/** Is the entry `name` of `tmp` a fetch directory left by a hermit add that is gone? */
function isStale(tmp: string, name: string, uid: number, now: number): boolean {
  const owner = fetchDirOwner(name);
  if (!owner) return false;
  const dir = path.join(tmp, name);
  const st = lstatSync(dir);
  if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o077) !== 0) return false;
  if (owner === "legacy") return now - st.mtimeMs > LEGACY_STALE_MS && onlyPackageJson(dir);
  return ownerGone(owner) && !fetchRunning(dir);
}

/** Remove the fetch directories in `tmp` that killed hermit adds left (see the module's rules). */
export function removeStaleFetchDirs(tmp: string): void {
  const uid = process.getuid?.();
  if (uid === undefined) return;
  let names: string[];
  try {
    names = readdirSync(tmp).filter((n) => n.startsWith(PREFIX));
  } catch {
    return;
  }
  const now = Date.now();
  for (const name of names) {
    try {
      // rm does not follow symlinks inside; a sweep running at once may remove it first
      if (isStale(tmp, name, uid, now)) rmSync(path.join(tmp, name), { recursive: true, force: true });
    } catch { /* gone meanwhile, or not ours to read: left */ }
  }
}

/** Make this process's fetch directory in `tmp` (mode 0700), after removing stale ones. */
export function makeFetchDir(tmp: string): string {
  removeStaleFetchDirs(tmp);
  return mkdtempSync(path.join(tmp, `${PREFIX}${process.pid}-${startTag(processStartTime(process.pid))}-`));
}

/** Note the fetch's process group in its directory, so a sweep leaves it while the fetch runs. */
export function noteFetchGroup(dir: string, pgid: number | undefined): void {
  if (pgid !== undefined) writeFileSync(path.join(dir, FETCH_GROUP_FILE), `${pgid}\n`);
}
