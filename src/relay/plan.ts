/**
 * The manifest as the relay's fast path knows it without the manifest loader (YAML, zod): the
 * normalized manifest, stored in hermit's state directory by whoever loaded it the slow way (the
 * service at its start, or a `hermit serve` that found no stored copy), and used only while the
 * manifest file holds exactly the bytes it was made from and the same hermit build reads it. Any
 * doubt (missing, another build, other bytes, unreadable) is a miss: the caller loads the manifest
 * the slow way. One file per manifest path, 0600 in a 0700 directory, replaced atomically.
 */
import { chmodSync, mkdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import type { Manifest } from "../manifest/types.ts";
import { writeFileAtomic } from "../platform/atomic_write.ts";
import { homeDir, stateDir } from "../platform/paths.ts";
import { VERSION } from "../version.ts";

const FORMAT = 1;

interface Stored {
  format: number;
  build: string;
  file: string;
  source: string;
  manifest: Manifest;
}

/**
 * Which hermit made a stored plan: its version and the executable's size and time (for a run from
 * sources that is the runtime's: a developer changing how manifests normalize bumps the version or
 * clears the state directory).
 */
export function buildId(): string {
  try {
    const s = statSync(process.execPath);
    return `${VERSION}+${s.size}.${Math.round(s.mtimeMs)}`;
  } catch {
    return VERSION;
  }
}

/** A short stable name for a path (53-bit string hash; the file itself names the path it is for). */
function hashOf(s: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16).padStart(14, "0");
}

export function planDir(env: Readonly<Record<string, string | undefined>> = process.env): string {
  return path.join(stateDir(process.platform, env, homeDir(env)), "relay-plans");
}

function planFile(dir: string, manifestFile: string): string {
  return path.join(dir, `${hashOf(manifestFile)}.json`);
}

/** The stored manifest for `file` if it was made from exactly `source` by `build`; else undefined. */
export function recallManifest(
  file: string,
  source: string,
  opts: { dir?: string; build?: string } = {},
): Manifest | undefined {
  try {
    const s = JSON.parse(readFileSync(planFile(opts.dir ?? planDir(), file), "utf8")) as Stored;
    const ok = s.format === FORMAT && s.build === (opts.build ?? buildId()) && s.file === file &&
      s.source === source && typeof s.manifest === "object" && s.manifest !== null;
    return ok ? s.manifest : undefined;
  } catch {
    return undefined;
  }
}

/** Store `manifest` as made from `source` (the exact text it was parsed from). Best effort. */
export function storeManifest(
  manifest: Manifest,
  source: string,
  opts: { dir?: string; build?: string } = {},
): void {
  const dir = opts.dir ?? planDir();
  const stored: Stored = {
    format: FORMAT,
    build: opts.build ?? buildId(),
    file: manifest.file,
    source,
    manifest,
  };
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (process.platform !== "win32") chmodSync(dir, 0o700);
    writeFileAtomic(planFile(dir, manifest.file), JSON.stringify(stored));
  } catch { /* a cache: the next relay loads the manifest the slow way */ }
}

/**
 * Remember the adapter whose manifest the caller has loaded, for the next relay's fast path. The
 * file is read and parsed again here, so what is stored is exactly what those bytes mean even if
 * the file changed since the caller read it.
 */
export async function rememberManifest(m: Manifest): Promise<void> {
  try {
    const source = readFileSync(m.file, "utf8");
    const { parseManifest } = await import("../manifest/load.ts"); // already loaded by the caller
    storeManifest(parseManifest(source, m.file, m.dir).manifest, source);
  } catch { /* changed into something invalid meanwhile: nothing to remember */ }
}
