/**
 * What the sandbox reads of files an entry may have written (the workspace's repository, a
 * user's `~/.npmrc`) before it starts the next one: small texts only, read without blocking, and
 * directories listed with a budget, so nothing planted there (a FIFO, a link to /dev/zero, a
 * million directories) stalls a start: the repository's config and its submodules' trees, found
 * as git finds them (a `.git` file, a `commondir`).
 */
import { type Dir, existsSync, lstatSync, opendirSync } from "node:fs";
import path from "node:path";
import { readTextCapped } from "../platform/read_capped.ts";
import { gitModulesIn, worktreeIn } from "./runs_later.ts";

/** Entries read from one directory at most. */
export const ENTRIES_READ = 1000;

/**
 * A small text file (at most 64 KiB), if it is one: not a FIFO (which would block), a link to
 * /dev/zero (endless) or larger. Read at every start (it may change).
 */
export function readSmallText(file: string): string | undefined {
  try {
    return readTextCapped(file, 64 * 1024);
  } catch {
    return undefined;
  }
}

/** The subdirectories of `dir` among its first ENTRIES_READ entries (links not followed). */
export function subdirectories(dir: string): string[] | undefined {
  let d: Dir | undefined;
  try {
    d = opendirSync(dir);
    const names: string[] = [];
    for (let read = 0, e = d.readSync(); e && read < ENTRIES_READ; read++, e = d.readSync()) {
      if (e.isDirectory()) names.push(e.name);
    }
    return names;
  } catch {
    return undefined;
  } finally {
    d?.closeSync();
  }
}

/** The submodules' git directories under `modules` (a repository's `.git/modules`). */
export function submodules(modules: string): string[] {
  return gitModulesIn(
    (rel) => subdirectories(path.join(modules, rel)),
    (rel) => existsSync(path.join(modules, rel, "HEAD")),
  );
}

/** What the sandbox needs to know of the workspace's repository (`runs_later.ts`). */
export interface RepositoryFacts {
  /** The config git reads (the common one, for a worktree). */
  gitConfig?: string;
  /** Each submodule's working tree, as its config's `core.worktree` names it (absolute). */
  submoduleTrees: string[];
}

/**
 * The repository of workspace `ws` as git finds it: `.git` a directory, or a file naming the git
 * directory (a worktree, a submodule's checkout); a `commondir` there leads to the config and
 * the submodules. Nothing when there is none.
 */
export function repositoryFacts(ws: string): RepositoryFacts {
  const dotGit = path.join(ws, ".git");
  let gitDir: string | undefined;
  try {
    const st = lstatSync(dotGit);
    if (st.isDirectory()) gitDir = dotGit;
    else if (st.isFile()) {
      const named = /^gitdir:\s*(.+?)\s*$/m.exec(readSmallText(dotGit) ?? "")?.[1];
      if (named) gitDir = path.resolve(ws, named);
    }
  } catch { /* no repository */ }
  if (!gitDir) return { submoduleTrees: [] };
  const common = readSmallText(path.join(gitDir, "commondir"))?.trim();
  const commonDir = common ? path.resolve(gitDir, common) : gitDir;
  const modules = path.join(commonDir, "modules");
  const submoduleTrees: string[] = [];
  for (const m of submodules(modules)) {
    const tree = worktreeIn(readSmallText(path.join(modules, m, "config")) ?? "");
    if (tree) submoduleTrees.push(path.resolve(modules, m, tree));
  }
  return { gitConfig: readSmallText(path.join(commonDir, "config")), submoduleTrees };
}
