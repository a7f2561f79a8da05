/**
 * Writing what a deploy, convert or removal decided: a backup of each file before it changes, each
 * file replaced atomically, the directories hermit created noted (and the empty ones it no longer
 * needs removed), then the record. All or nothing: when a write fails part-way, the files already
 * written get their old bytes back and the directories made for them go, so no file is left
 * holding hermit's edits without the record that owns them; the error names the file.
 *
 * Hermit's own files (record, backups, `.gitignore`) replace a link rather than follow it (run.ts
 * refuses a folder holding one before anything is read).
 *
 * Before anything is written, every file the run read and means to change, and the record, must
 * still hold the bytes the run decided on: the deploy lock is per state directory, so a deploy by
 * another user (or under another `HERMIT_HOME`) into the same project may have written meanwhile;
 * then this run stops, nothing written, and says to run again (a lost update otherwise).
 *
 * Backups: `backup/<path>` next to the record (paths inside the scope's root relative to it,
 * others under `_abs/`). A run that leaves nothing on record (the last `--remove`) deletes the
 * record and its folder, so it keeps its backups in hermit's state directory instead:
 * `removed/<time>-<adapter>/` there, each file under its absolute path.
 */
import { rmSync, statSync } from "node:fs";
import path from "node:path";
import { Exit, HermitError } from "../errors.ts";
import { exists, readBytes, removeEmptyDir, removeFile, writeAtomic, writeOwn } from "../hosts/files.ts";
import type { Scope } from "../hosts/types.ts";
import { type FileChange, sameBytes } from "./ops.ts";
import { type DeployState, fromStored, holdsItem, isEmptyState, toStored } from "./state.ts";

export interface CommitPlaces {
  /** The project (deploy) or home directory (convert). */
  root: string;
  scope: Scope;
  /** The folder of the record and its backups. */
  dir: string;
  recordFile: string;
  /** Where a run that leaves nothing on record keeps its backups. */
  removedBackups: string;
  /** The record's bytes as the run read them (undefined: there was none). */
  recordBefore: Uint8Array | undefined;
  show: (file: string) => string;
}

export interface Committed {
  /** The folder this run's backups are in, when it wrote any. */
  backups?: string;
}

const WHY: Record<string, string> = {
  EACCES: "permission denied",
  EPERM: "not permitted",
  ENOTDIR: "a parent is not a directory",
  EISDIR: "it is a directory",
  EROFS: "read-only file system",
  ENOSPC: "no space left on the device",
};

/**
 * A file that a write must not replace, checked before anything is written: one the user made
 * read-only (no owner write bit: an atomic rename would get past its mode, which is how people say
 * "leave this alone"), and one with other names (hard links: the rename would leave them with the
 * old content, split from it for good, as a dotfiles copy linked to ~/.claude.json was).
 */
export function refuseUnreplaceable(changes: FileChange[], show: (file: string) => string): void {
  for (const c of changes) {
    if (c.before === undefined) continue;
    let st: { mode: number; nlink: number };
    try {
      st = statSync(c.file);
    } catch {
      continue;
    }
    if ((st.mode & 0o200) === 0) {
      throw new HermitError(
        `${show(c.file)} is read-only (mode ${
          (st.mode & 0o777).toString(8)
        }); hermit does not replace a file you made read-only: chmod u+w ${
          show(c.file)
        } to let it; nothing was written`,
        Exit.usage,
      );
    }
    if (st.nlink > 1 && c.after !== undefined) {
      throw new HermitError(
        `${
          show(c.file)
        } has ${st.nlink} names (hard links); hermit replaces a file whole, which would split it from the others: make them symlinks to one file (ln -sf), then run again; nothing was written`,
        Exit.usage,
      );
    }
  }
}

export function commit(changes: FileChange[], state: DeployState, p: CommitPlaces): Committed {
  refuseChangedMeanwhile(changes, p);
  const keepsRecord = state.items.length > 0 || Object.keys(state.files).length > 0;
  const backups = keepsRecord ? path.join(p.dir, "backup") : p.removedBackups;
  const written: FileChange[] = [];
  const made: string[] = [];
  const folderBefore = exists(p.dir);
  let current = "";
  let backedUp = false;
  try {
    for (const c of changes) {
      current = c.file;
      if (c.before !== undefined) {
        if (keepsRecord) ensureGitignore(p);
        writeOwn(backupPath(backups, c.file, keepsRecord ? p.root : undefined), c.before);
        backedUp = true;
      }
      if (c.after === undefined) removeFile(c.file);
      else {
        made.push(...missingDirs(c.file));
        for (const d of writeAtomic(c.file, c.after)) {
          const s = toStored(p.root, d);
          if (!state.dirs.includes(s)) state.dirs.push(s);
        }
      }
      written.push(c);
    }
    current = p.recordFile;
    writeRecord(state, p);
  } catch (err) {
    const undone = rollBack(written, made, p.show);
    // a record folder this run made holds only this run's backups and .gitignore: "nothing changed"
    if (!folderBefore) {
      try {
        rmSync(p.dir, { recursive: true, force: true });
      } catch { /* left behind: harmless */ }
    }
    const kept = backedUp && (folderBefore || !keepsRecord); // a removal's backups are in the state dir
    throw failed(current, err, undone, kept ? backups : undefined, p.show);
  }
  return backedUp ? { backups } : {};
}

/** A file (or the record) that no longer holds what the run read stops the run before it writes. */
function refuseChangedMeanwhile(changes: FileChange[], p: CommitPlaces): void {
  const read = [...changes.map((c): [string, Uint8Array | undefined] => [c.file, c.before])];
  read.push([p.recordFile, p.recordBefore]);
  for (const [file, before] of read) {
    if (sameBytes(readBytes(file), before)) continue;
    throw new HermitError(
      `${
        p.show(file)
      } changed while this run was deciding (another deploy or convert into the same place, by another user or under another HERMIT_HOME?); nothing was written: run again`,
    );
  }
}

/** Where the backup of `file` goes: under its path relative to `root`, else its absolute path. */
function backupPath(backups: string, file: string, root: string | undefined): string {
  const stored = root === undefined ? file : toStored(root, file);
  if (!path.isAbsolute(stored)) return path.join(backups, stored);
  const bare = stored.replace(/^[A-Za-z]:/, "").replace(/^[\\/]+/, "");
  return root === undefined ? path.join(backups, bare) : path.join(backups, "_abs", bare);
}

/**
 * The record (with `.gitignore` in a project), or no record and no folder when nothing is left.
 * Writing or deleting the record is the last step that may fail: what follows is tidying up.
 */
function writeRecord(state: DeployState, p: CommitPlaces): void {
  for (const d of [...state.dirs].sort((a, b) => b.length - a.length)) {
    if (holdsItem(state, p.root, d)) continue;
    removeEmptyDir(fromStored(p.root, d));
    state.dirs = state.dirs.filter((x) => x !== d);
  }
  if (!isEmptyState(state)) {
    const record = new TextEncoder().encode(JSON.stringify(state, null, 2) + "\n");
    if (sameBytes(readBytes(p.recordFile), record)) return;
    ensureGitignore(p);
    writeOwn(p.recordFile, record);
    return;
  }
  removeFile(p.recordFile);
  try {
    // Earlier runs' backups go with the record: what they held is back in place.
    rmSync(path.join(p.dir, "backup"), { recursive: true, force: true });
    if (p.scope === "project") removeFile(path.join(p.dir, ".gitignore"));
    removeEmptyDir(p.dir);
  } catch { /* the record is gone; leftovers in its folder are harmless */ }
}

function ensureGitignore(p: CommitPlaces): void {
  const file = path.join(p.dir, ".gitignore");
  if (p.scope !== "project" || readBytes(file) !== undefined) return;
  writeOwn(file, new TextEncoder().encode("# hermit deploy's record and backups: per machine\n*\n"), 0o644);
}

/** The directories a write of `file` will have to create. */
function missingDirs(file: string): string[] {
  const out: string[] = [];
  for (let d = path.dirname(file); !exists(d) && path.dirname(d) !== d; d = path.dirname(d)) out.push(d);
  return out;
}

/** Put back what `written` changed, newest first; returns the files that could not be put back. */
function rollBack(written: FileChange[], made: string[], show: (f: string) => string): string[] {
  const stuck: string[] = [];
  for (const c of [...written].reverse()) {
    try {
      if (c.before === undefined) removeFile(c.file);
      else writeAtomic(c.file, c.before);
    } catch {
      stuck.push(show(c.file));
    }
  }
  for (const d of [...new Set(made)].sort((a, b) => b.length - a.length)) removeEmptyDir(d);
  return stuck;
}

function failed(
  file: string,
  err: unknown,
  stuck: string[],
  backups: string | undefined,
  show: (f: string) => string,
): HermitError {
  const code = (err as NodeJS.ErrnoException).code;
  const why = code ? `${code}${WHY[code] ? `: ${WHY[code]}` : ""}` : String((err as Error).message ?? err);
  const undone = stuck.length
    ? `could not undo the changes to ${stuck.join(", ")}${
      backups ? `: the previous contents are in ${backups}` : ""
    }`
    : "nothing was changed";
  return new HermitError(`cannot write ${show(file)} (${why}); ${undone}`);
}
