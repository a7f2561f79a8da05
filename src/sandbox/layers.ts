/**
 * A layer of its own over each package cache an entry may write (Linux, where the launcher gets a
 * mount namespace): an overlay whose lower directory is the user's cache, read as it is, and whose
 * writes go to an upper directory kept per entry under hermit's state. What the entry downloads
 * stays warm for its next start, and nothing it writes reaches the cache the user's own,
 * unconfined `npx`, `bunx`, `uvx` or `pnpm` run from (an `npx` install under `~/.npm/_npx/` is run
 * as it is found). An overlay's upper directory may serve one mount at a time (two sessions of one
 * entry sharing one would corrupt each other's copies), so each start claims a slot of the entry's
 * layers with a lock held while it runs (`claimLayers`); layers unused for a month are removed
 * (`layers_prune.ts`). Without a mount namespace, or where the overlay cannot be mounted, the cache
 * is written in place as before.
 */
import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { messageOf } from "../errors.ts";
import { log } from "../log.ts";
import { tryLock } from "../platform/lock.ts";
import type { PackageCache } from "./policy.ts";
import { markClaimed, pruneLayers } from "./layers_prune.ts";

export interface Layer {
  /** The cache, as the entry sees it. */
  path: string;
  upper: string;
  work: string;
}

/** Where every entry's layers live, under the state directory. */
export function layersRoot(stateDir: string): string {
  return path.join(stateDir, "sandbox", "layers");
}

/**
 * The layers of the entry `label` of the adapter in `adapterDir`: one per cache, under a
 * directory named for the two (so each entry keeps its own across starts). A cache whose path the
 * overlay's options cannot carry (`,`, `:` or `\\` in it) is written in place.
 */
export function layersFor(
  stateDir: string,
  adapterDir: string,
  label: string,
  caches: readonly PackageCache[],
  slot = 0,
): Layer[] {
  const entry = path.join(entryDir(stateDir, adapterDir, label), String(slot));
  return caches
    .filter((c) => !/[,:\\]/.test(c.path) && !/[,:\\]/.test(entry))
    .map((c) => {
      const at = path.join(entry, `${c.manager}-${short(c.path)}`);
      return { path: c.path, upper: path.join(at, "upper"), work: path.join(at, "work") };
    });
}

const short = (s: string) => createHash("sha256").update(s).digest("hex").slice(0, 16);

/** The directory of one entry's layers (its slots, and their locks). Pure. */
function entryDir(stateDir: string, adapterDir: string, label: string): string {
  return path.join(layersRoot(stateDir), short(`${adapterDir}\0${label}`));
}

/** How many starts of one entry at once get a layer; past that, the caches are written in place. */
export const LAYER_SLOTS = 16;

/**
 * The layers of one start of an entry: the first slot no running start of it holds (its lock is
 * kept until `release`, or the process ends); none when every slot is taken or the lock cannot be
 * made (then the caches are written in place, said at debug level).
 */
export async function claimLayers(
  stateDir: string,
  adapterDir: string,
  label: string,
  caches: readonly PackageCache[],
): Promise<{ layers: Layer[]; release(): void }> {
  if (caches.length === 0) return { layers: [], release: () => {} };
  const dir = entryDir(stateDir, adapterDir, label);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    for (let slot = 0; slot < LAYER_SLOTS; slot++) {
      const lock = await tryLock(path.join(dir, `${slot}.lock`));
      if (lock) {
        markClaimed(dir, adapterDir, label);
        // the layers of entries unused for a month, or of adapters gone, go (once a day, in the background)
        void pruneLayers(layersRoot(stateDir), dir, LAYER_SLOTS);
        return {
          layers: layersFor(stateDir, adapterDir, label, caches, slot),
          release: () => lock.release(),
        };
      }
    }
    log.debug(
      `${label}: ${LAYER_SLOTS} starts hold its package-cache layers; this one writes the caches in place`,
    );
  } catch (err) {
    log.debug(`${label}: no package-cache layer (${messageOf(err)}); the caches are written in place`);
  }
  return { layers: [], release: () => {} };
}
