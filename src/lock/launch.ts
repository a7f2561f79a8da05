/**
 * Whether what an upstream entry launches is what hermit.lock holds for it: the same package (by
 * registry and name: the lock pins its version; an exact version in hermit.yaml, which runs as
 * written, must be the locked one, fetched from the registry the lock holds), the same command line
 * as written, or the same URL. The lock's hashes cover the tools only, so without this a hostile
 * edit to hermit.yaml could point a locked server at other code offering the same definitions (or
 * the same name and version at another registry), or one to hermit.lock could drop the package it
 * pins; neither then starts. Pure but for reading the registry files in the entry's directory.
 */
import { escapeUnseen } from "../gates/approval_text.ts";
import type { Upstream } from "../manifest/types.ts";
import { isPinnable, packageOf, sameLockedPackage } from "./packages.ts";
import { entryRegistry, registryWords, sameRegistry } from "./registry.ts";
import type { LockedServer } from "./types.ts";

/** Why `u` may not start under `entry` (undefined: it launches what the lock holds). */
export function launchMismatch(
  u: Upstream,
  entry: LockedServer | undefined,
  adapterDir: string,
): string | undefined {
  const why = mismatch(u, entry, adapterDir);
  return why === undefined ? undefined : escapeUnseen(why);
}

function mismatch(u: Upstream, entry: LockedServer | undefined, adapterDir: string): string | undefined {
  if (!entry) return "it is not in hermit.lock";
  if (u.kind !== "stdio") {
    if (entry.url === undefined) return "hermit.lock holds no url for it";
    return entry.url === u.url
      ? undefined
      : `it connects to '${u.url}', not the url hermit.lock holds for it ('${entry.url}')`;
  }
  const line = [u.command, ...u.args].join(" ");
  const ref = packageOf(u.command, u.args);
  if (entry.package) {
    const held = `${entry.package.name} ${entry.package.version}`;
    if (isPinnable(ref) && sameLockedPackage(ref, entry.package)) {
      // an exact version in hermit.yaml runs as written: it must be the one the lock holds
      if (ref.exact && ref.requested !== entry.package.version) {
        return `it asks for ${ref.name} ${ref.requested}, not the version hermit.lock holds for it (${held})`;
      }
      // the same name and version from another registry is other code
      const registry = entryRegistry(u, adapterDir);
      if (sameRegistry(registry, entry.package.registry)) return undefined;
      return `it fetches ${ref.name} from ${registryWords(registry)}, not from ${
        registryWords(entry.package.registry)
      } as hermit.lock holds (the same version from there may be other code: take the setting out)`;
    }
    return `it runs '${
      isPinnable(ref) ? ref.name : line
    }', not the package hermit.lock holds for it (${held})`;
  }
  if (entry.command === undefined) return "hermit.lock holds no command for it";
  return entry.command === line
    ? undefined
    : `it runs '${line}', not what hermit.lock holds for it ('${entry.command}')`;
}
