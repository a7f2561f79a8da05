/**
 * How a deploy or convert run reads the disk: the hosts' view of it (existence, and text through the
 * run's workspace; whether two paths are one file), a file's bytes with an error that names it,
 * and the record's bytes for commit's check that nothing changed meanwhile.
 */
import { Exit, HermitError } from "../errors.ts";
import { exists, NotAFile, readBytes } from "../hosts/files.ts";
import type { HostFs } from "../hosts/types.ts";
import { DanglingLink } from "../platform/atomic_write.ts";
import { isInside, realPathOf } from "./confine.ts";
import type { Workspace } from "./ops.ts";

/**
 * The disk as host plans see it: existence, and text through the run's workspace. What a project
 * deploy's plan only looks at outside the project (the user's own host settings: is this project
 * trusted in ~/.codex/config.toml?) is read as it is: the workspace refuses outside paths, which
 * it may write.
 */
export function hostFs(ws: Workspace, realRoot: string | undefined): HostFs {
  return {
    exists,
    same: (a, b) => realPathOf(a) === realPathOf(b),
    read: (p) => {
      try {
        if (realRoot && !isInside(realRoot, realPathOf(p))) {
          const b = readBytes(p);
          return b === undefined ? undefined : new TextDecoder().decode(b);
        }
        return ws.text(p);
      } catch {
        return undefined; // a directory, unreadable: nothing to go by
      }
    },
  };
}

/**
 * A file's bytes (undefined when missing); an unreadable one, one that is not a regular file (a
 * FIFO would block the run) or a link to nothing is an error that names it.
 */
export function readOrExplain(file: string, show: (f: string) => string): Uint8Array | undefined {
  try {
    return readBytes(file);
  } catch (err) {
    if (err instanceof NotAFile) {
      const why = `not a regular file (${err.kind}); hermit edits only regular files`;
      throw new HermitError(`${show(file)}: ${why}: remove it or replace it with a file`, Exit.usage);
    }
    if (err instanceof DanglingLink) throw new DanglingLink(show(err.link), err.target);
    const code = (err as NodeJS.ErrnoException).code ?? "error";
    throw new HermitError(`cannot read ${show(file)} (${code}); nothing was written`, Exit.usage);
  }
}

/** The record's bytes as read now, for commit's check that nothing changed meanwhile (loadState says why it cannot be read). */
export function recordBytes(file: string): Uint8Array | undefined {
  try {
    return readBytes(file);
  } catch {
    return undefined;
  }
}
