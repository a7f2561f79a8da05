/**
 * A layer of its own over each package cache an entry may write (Linux, where the launcher gets a
 * mount namespace): an overlay whose lower directory is the user's cache, read as it is, and whose
 * writes go to an upper directory kept per entry under hermit's state. What the entry downloads
 * stays warm for its next start, and nothing it writes reaches the cache the user's own,
 * unconfined `npx`, `bunx`, `uvx` or `pnpm` run from (an `npx` install under `~/.npm/_npx/` is run
 * as it is found). Without a mount namespace, or where the overlay cannot be mounted, the cache is
 * written in place as before. Pure.
 */
import { createHash } from "node:crypto";
import path from "node:path";
import type { PackageCache } from "./policy.ts";

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
): Layer[] {
  const short = (s: string) => createHash("sha256").update(s).digest("hex").slice(0, 16);
  const entry = path.join(layersRoot(stateDir), short(`${adapterDir}\0${label}`));
  return caches
    .filter((c) => !/[,:\\]/.test(c.path) && !/[,:\\]/.test(entry))
    .map((c) => {
      const at = path.join(entry, `${c.manager}-${short(c.path)}`);
      return { path: c.path, upper: path.join(at, "upper"), work: path.join(at, "work") };
    });
}
