/**
 * Keeping a project deploy inside its project, whatever the project holds (it may be a repository
 * the user just cloned): where a path really leads (links in it and its existing parents
 * resolved), a project record whose paths lead out of the project refused, and hermit's own folder
 * (`.hermit/`: the record, `.gitignore`, backups) used only when no link is in it. User-scope
 * convert is not confined: the user's own dotfiles are often links, and they are followed. In
 * either scope, a record item whose file is a folder is refused, naming it.
 */
import { lstatSync, readdirSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { Exit, HermitError } from "../errors.ts";
import { type DeployState, fromStored } from "./state.ts";

/** Where `file` really leads: its deepest existing part with every link resolved, the rest appended. */
export function realPathOf(file: string): string {
  const rest: string[] = [];
  for (let p = path.resolve(file);; p = path.dirname(p)) {
    try {
      return path.join(realpathSync(p), ...rest.reverse());
    } catch {
      if (path.dirname(p) === p) return path.resolve(file);
      rest.push(path.basename(p));
    }
  }
}

/** True when `p` is `root` or below it (both absolute, links already resolved). Pure. */
export function isInside(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/** A project file that really leads outside the project (`realRoot`, links resolved) is refused. */
export function confineToProject(realRoot: string, file: string, show: (f: string) => string): void {
  const real = realPathOf(file);
  if (isInside(realRoot, real)) return;
  throw new HermitError(
    `${
      show(file)
    } leads to ${real}, outside the project; hermit writes only inside the project: replace the link with a copy of the file`,
    Exit.usage,
  );
}

/** The paths a record names (files written, files noted, directories created), each with its field. */
function recordPaths(state: DeployState): [field: string, stored: string][] {
  return [
    ...state.items.map((r, i): [string, string] => [`items[${i}].file`, r.file]),
    ...Object.keys(state.files).map((f): [string, string] => ["files", f]),
    ...state.dirs.map((d, i): [string, string] => [`dirs[${i}]`, d]),
  ];
}

/**
 * A project's record naming any path outside the project (`..`, absolute, or through a link) is
 * refused as a whole: undoing such an item would write or delete outside the project.
 */
export function checkRecordInProject(state: DeployState, root: string, recordFile: string): void {
  const realRoot = realpathSync(root);
  for (const [field, stored] of recordPaths(state)) {
    const abs = fromStored(root, stored);
    // Its parents' links resolved (a host file's own link is judged when it is read).
    if (isInside(realRoot, path.join(realPathOf(path.dirname(abs)), path.basename(abs)))) continue;
    throw new HermitError(
      `${recordFile}: ${field} names ${stored}, outside the project; delete the record (it was not written by hermit for this project; hermit then no longer knows what it wrote: its entries count as the user's own)`,
      Exit.usage,
    );
  }
}

/**
 * A record item whose file is a folder (`""` and `.` are the root itself) is refused, naming it:
 * hermit's items are files, and reading one said only "cannot read .claude (EISDIR)".
 */
export function checkItemFiles(state: DeployState, root: string, recordFile: string): void {
  state.items.forEach((r, i) => {
    try {
      if (!statSync(fromStored(root, r.file)).isDirectory()) return;
    } catch {
      return; // missing (nothing to take away), or unreadable: reading it says so
    }
    throw new HermitError(
      `${recordFile}: items[${i}].file names ${
        JSON.stringify(r.file)
      }, a folder; hermit's items are files: take that item out of the record, or delete the record (hermit then no longer knows what it wrote: its entries count as the user's own)`,
      Exit.usage,
    );
  });
}

/** The first symlink at or below `dir` (hermit's own folder), if any. */
export function linkIn(dir: string): string | undefined {
  let st;
  try {
    st = lstatSync(dir);
  } catch {
    return undefined; // missing (or unreadable: reading the record says so)
  }
  if (st.isSymbolicLink()) return dir;
  if (!st.isDirectory()) return undefined;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return undefined; // unreadable: writing into it says so
  }
  for (const name of names) {
    const found = linkIn(path.join(dir, name));
    if (found) return found;
  }
  return undefined;
}

/** Hermit's own folder holding a link is refused: its record and backups are never used through one. */
export function refuseLinksIn(dir: string, show: (f: string) => string): void {
  const link = linkIn(dir);
  if (link === undefined) return;
  throw new HermitError(
    `${
      show(link)
    } is a symlink; hermit reads and writes its own files only directly: delete it and run again`,
    Exit.usage,
  );
}
