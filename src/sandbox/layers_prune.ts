/**
 * Reclaiming the package-cache layers no entry uses any more: each entry's layers directory
 * records whose it is and when it was last claimed (`owner.json`, rewritten at every claim), and
 * at most once a day a claim looks over the others and removes those unused for 30 days or whose
 * adapter directory is gone, each only while it holds every slot's lock (a running start keeps its
 * layers). Without it every entry ever started kept its downloads under hermit's state for good.
 * The decision is pure (`staleLayers`); the removal runs in the background and only logs at debug
 * level when a directory cannot be removed.
 */
import {
  existsSync,
  lstatSync,
  readdirSync,
  renameSync,
  rm as rmCallback,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { messageOf } from "../errors.ts";
import { log } from "../log.ts";
import { readTextCapped } from "../platform/read_capped.ts";
import { type FileLock, tryLock } from "../platform/lock.ts";

/** Unused this long, an entry's layers are removed. */
export const LAYER_MAX_AGE_MS = 30 * 24 * 3600_000;
/** The look over every entry's layers happens at most this often. */
export const PRUNE_EVERY_MS = 24 * 3600_000;

/** `rm -rf` off the event loop (node:fs's own; `node:fs/promises` would be one more built-in in the binary). */
const rm = (p: string) =>
  new Promise<void>((resolve, reject) =>
    rmCallback(p, { recursive: true, force: true }, (err) => (err ? reject(err) : resolve()))
  );

const OWNER = "owner.json";
const STAMP = ".pruned";
const TRASH = ".removed-";

/** One entry's layers directory, as the pruning sees it. */
export interface LayerDir {
  name: string;
  /** When it was last claimed (ms). */
  lastUse: number;
  /** The adapter directory it belongs to, when recorded. */
  adapterDir?: string;
}

/**
 * Which of `dirs` to remove at `now`: unused for `maxAgeMs`, or recorded for an adapter
 * directory that no longer exists (`exists`). Pure.
 */
export function staleLayers(
  dirs: readonly LayerDir[],
  now: number,
  exists: (dir: string) => boolean,
  maxAgeMs = LAYER_MAX_AGE_MS,
): string[] {
  return dirs
    .filter((d) => now - d.lastUse > maxAgeMs || (d.adapterDir !== undefined && !exists(d.adapterDir)))
    .map((d) => d.name);
}

/** Record, in the entry's layers directory, whose it is and that it was claimed now (best effort). */
export function markClaimed(entryDir: string, adapterDir: string, label: string): void {
  try {
    writeFileSync(path.join(entryDir, OWNER), JSON.stringify({ adapterDir, label }) + "\n", { mode: 0o600 });
  } catch (err) {
    log.debug(`${label}: its package-cache layers are not marked as used (${messageOf(err)})`);
  }
}

/** What `root` holds, for `staleLayers` (a directory without `owner.json`: its own mtime). */
function layerDirs(root: string, except: string): LayerDir[] {
  const out: LayerDir[] = [];
  for (const name of readdirSync(root)) {
    const dir = path.join(root, name);
    if (dir === except || name.startsWith(".")) continue;
    try {
      if (!lstatSync(dir).isDirectory()) continue;
      const owner = path.join(dir, OWNER);
      const st = statSync(existsSync(owner) ? owner : dir);
      const text = existsSync(owner) ? readTextCapped(owner, 64 * 1024) : undefined;
      const adapterDir = text ? (JSON.parse(text) as { adapterDir?: unknown }).adapterDir : undefined;
      out.push({
        name,
        lastUse: st.mtimeMs,
        ...(typeof adapterDir === "string" ? { adapterDir } : {}),
      });
    } catch { /* unreadable: left alone */ }
  }
  return out;
}

/**
 * Every one of the `slots` locks of `dir` (a start at the same time then finds none free and
 * writes the caches in place), or undefined, none held, when a start holds one.
 */
async function allSlots(dir: string, slots: number): Promise<FileLock[] | undefined> {
  const held: FileLock[] = [];
  for (let slot = 0; slot < slots; slot++) {
    const lock = await tryLock(path.join(dir, `${slot}.lock`));
    if (!lock) {
      for (const l of held) l.release();
      return undefined;
    }
    held.push(lock);
  }
  return held;
}

/**
 * At most once per `PRUNE_EVERY_MS` (a stamp in `root`), remove the stale layers directories in
 * `root` but `own` (each of `slots` slots). The names removed; never throws.
 */
export async function pruneLayers(
  root: string,
  own: string,
  slots: number,
  now = Date.now(),
): Promise<string[]> {
  const removed: string[] = [];
  try {
    const stamp = path.join(root, STAMP);
    if (existsSync(stamp) && now - statSync(stamp).mtimeMs < PRUNE_EVERY_MS) return removed;
    writeFileSync(stamp, "");
    utimesSync(stamp, now / 1000, now / 1000);
    for (const name of staleLayers(layerDirs(root, own), now, existsSync)) {
      const dir = path.join(root, name);
      const locks = await allSlots(dir, slots).catch(() => undefined);
      if (!locks) continue;
      try {
        // out of the way at once (a start of that entry after this makes a fresh one), then removed
        renameSync(dir, path.join(root, `${TRASH}${name}`));
        removed.push(name);
      } catch (err) {
        log.debug(`package-cache layers ${dir}: not removed (${messageOf(err)})`);
      } finally {
        for (const l of locks) l.release();
      }
    }
    // what this or an earlier look set aside (one cut short by hermit's exit included)
    for (const name of readdirSync(root).filter((n) => n.startsWith(TRASH))) {
      await rm(path.join(root, name)).catch((err) =>
        log.debug(`package-cache layers ${name}: not removed (${messageOf(err)})`)
      );
    }
  } catch (err) {
    log.debug(`package-cache layers: no pruning (${messageOf(err)})`);
  }
  return removed;
}
