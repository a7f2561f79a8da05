/**
 * `DIR/.serve/`: the runtime files of an adapter's standalone service — the endpoint (with the
 * bearer token), the locks and the daemon's log. hermit trusts the directory only when it is
 * a real directory (never a symbolic link) owned by the current user and not writable by group or
 * others; anything else is refused with one line naming the fix, because whoever controls it can
 * point relays at their own server or read the token. The directory is created 0700 with a
 * `.gitignore` that ignores everything in it, so none of it ever shows up as a change in the
 * user's repository (the locks live inside it for the same reason: the launch lock relays and
 * `--daemon` take while they start a service, and the one a service holds while it runs). Ownership and mode are POSIX
 * notions: on Windows only the symbolic-link rule applies.
 */
import { chmodSync, constants, lstatSync, mkdirSync, openSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { Exit, HermitError } from "../errors.ts";

export const SERVE_DIR = ".serve";
const GITIGNORE =
  "# hermit's runtime files for this adapter (service token, lock, log): never commit them\n*\n";

export function serveDir(adapterDir: string): string {
  return path.join(adapterDir, SERVE_DIR);
}

export function lockPath(adapterDir: string): string {
  return path.join(serveDir(adapterDir), "lock");
}

/** Held by a service from before it starts its upstreams until it exits: one service per adapter. */
export function serviceLockPath(adapterDir: string): string {
  return path.join(serveDir(adapterDir), "service.lock");
}

export function logPath(adapterDir: string): string {
  return path.join(serveDir(adapterDir), "log");
}

/** The facts a trust decision needs about a path, from lstat (never following a link). */
export interface PathFacts {
  exists: boolean;
  symlink: boolean;
  kind: "directory" | "file" | "other";
  uid?: number;
  mode: number;
}

export function factsOf(p: string): PathFacts {
  try {
    const s = lstatSync(p);
    return {
      exists: true,
      symlink: s.isSymbolicLink(),
      kind: s.isDirectory() ? "directory" : s.isFile() ? "file" : "other",
      uid: s.uid,
      mode: s.mode & 0o7777,
    };
  } catch {
    return { exists: false, symlink: false, kind: "other", mode: 0 };
  }
}

/**
 * Why a path in `.serve/` cannot be trusted, or undefined when it can. Pure: `uid` is the current
 * user's (undefined where the platform has none, Windows).
 */
export function distrust(
  facts: PathFacts,
  want: "directory" | "file",
  uid: number | undefined,
): string | undefined {
  if (!facts.exists) return undefined;
  if (facts.symlink) return "it is a symbolic link (hermit never follows one there)";
  if (facts.kind !== want) return `it is not a ${want}`;
  if (uid === undefined) return undefined;
  if (facts.uid !== uid) return `it belongs to another user (uid ${facts.uid}; you are ${uid})`;
  if (facts.mode & 0o022) {
    return `it is writable by group or others (mode ${facts.mode.toString(8).padStart(4, "0")})`;
  }
  return undefined;
}

const currentUid = (): number | undefined => process.getuid?.();

/** One line refusing `p` for `why`, with the fix. */
export function refusal(p: string, why: string): HermitError {
  return new HermitError(
    `refusing ${p}: ${why}; remove it (hermit recreates ${SERVE_DIR}/ owner-only) and try again`,
    Exit.refused,
  );
}

/** Throw the refusal when `p` exists and cannot be trusted. */
export function checkTrusted(p: string, want: "directory" | "file"): void {
  const why = distrust(factsOf(p), want, currentUid());
  if (why) throw refusal(p, why);
}

/** Can a service be launched here: `.serve/`, its log and its lock, where they exist, trustworthy? */
export function checkLaunchable(adapterDir: string): void {
  checkTrusted(serveDir(adapterDir), "directory");
  checkTrusted(logPath(adapterDir), "file");
  checkTrusted(lockPath(adapterDir), "file");
  checkTrusted(serviceLockPath(adapterDir), "file");
}

/** `.serve/`, created owner-only with its `.gitignore` when missing; refused when not trustworthy. */
export function ensureServeDir(adapterDir: string): string {
  const dir = serveDir(adapterDir);
  checkTrusted(dir, "directory");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  checkTrusted(dir, "directory"); // a race may have put something else there
  if (process.platform !== "win32") chmodSync(dir, 0o700);
  const ignore = path.join(dir, ".gitignore");
  if (!factsOf(ignore).exists) writeFileSync(ignore, GITIGNORE, { mode: 0o600 });
  return dir;
}

/** Open `.serve/log` for appending, never through a symbolic link (O_NOFOLLOW, or a check where there is none). */
export function openServeLog(adapterDir: string): number {
  const dir = ensureServeDir(adapterDir);
  const file = logPath(adapterDir);
  checkTrusted(file, "file");
  const noFollow = constants.O_NOFOLLOW ?? 0;
  try {
    return openSync(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | noFollow, 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ELOOP") {
      throw refusal(file, "it is a symbolic link (hermit never follows one there)");
    }
    throw new HermitError(`cannot open ${file} in ${dir}: ${(err as Error).message}`, Exit.unexpected);
  }
}
