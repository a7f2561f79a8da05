/**
 * Where an adapter's manifest is, and how paths are shown in messages. Kept apart from the loader
 * (YAML, zod) so that the relay's fast path can find the manifest without loading either.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { Exit, HermitError } from "../errors.ts";
import { shellQuote } from "../platform/shell_quote.ts";

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

/**
 * How a directory is named for the user to pass: relative to the working directory (`.` for it),
 * in quotes that a shell takes as one word ('it'\''s' for it's).
 */
function asArgument(dir: string): string {
  const word = shellQuote(path.relative(process.cwd(), dir) || ".");
  return word.startsWith("'") ? word : `'${word}'`;
}

/**
 * Where the adapter probably is when `dir` holds no hermit.yaml (a newcomer in its `tools/`, or in
 * the project one level above it): the nearest directory above with one, else those just below.
 * What to tell the user, or undefined when neither is there.
 */
export function adapterNearby(dir: string): string | undefined {
  for (let at = dir, up = path.dirname(dir); up !== at; at = up, up = path.dirname(up)) {
    if (existsSync(path.join(up, MANIFEST_FILE))) {
      const here = path.resolve(dir) === process.cwd() ? "this directory" : path.relative(process.cwd(), dir);
      return `${here} is inside the adapter ${asArgument(up)}: pass that directory instead`;
    }
  }
  let below: string[] = [];
  try {
    below = readdirSync(dir, { withFileTypes: true })
      .filter((e) =>
        e.isDirectory() && !e.name.startsWith(".") && existsSync(path.join(dir, e.name, MANIFEST_FILE))
      )
      .map((e) => asArgument(path.join(dir, e.name)))
      .sort();
  } catch {
    return undefined;
  }
  if (below.length === 0) return undefined;
  const shown = below.length > 5 ? [...below.slice(0, 5), "…"] : below;
  return below.length === 1
    ? `an adapter is in a directory below: pass ${shown[0]}`
    : `adapters are in directories below: pass one of ${shown.join(", ")}`;
}
