/**
 * Where an adapter's manifest is, and how paths are shown in messages. Kept apart from the loader
 * (YAML, zod) so that the relay's fast path can find the manifest without loading either.
 */
import { statSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { Exit, HermitError } from "../errors.ts";

export const MANIFEST_FILE = "hermit.yaml";

/** `DIR` may be the adapter directory or its hermit.yaml. */
export function resolveManifestPath(target: string): { file: string; dir: string } {
  const abs = path.resolve(target);
  let isDir = false;
  try {
    isDir = statSync(abs).isDirectory();
  } catch {
    throw new HermitError(
      `${target}: no such directory; pass an adapter directory (one holding ${MANIFEST_FILE})`,
      Exit.usage,
    );
  }
  const file = isDir ? path.join(abs, MANIFEST_FILE) : abs;
  return { file, dir: path.dirname(file) };
}

/** How a path is shown in messages: relative to the working directory when that is shorter. */
export function displayPath(file: string): string {
  const rel = path.relative(process.cwd(), file);
  return rel && !rel.startsWith("..") && !path.isAbsolute(rel) ? rel : file;
}
