/**
 * Loading `hermit.yaml`: read, parse YAML with positions, validate with zod, normalize. Every
 * failure becomes a `ManifestError` holding one located line per problem (exit 2); nothing else
 * escapes, whatever the file holds.
 */
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { LineCounter, parseDocument } from "yaml";
import type { z } from "zod";
import { Exit, HermitError } from "../errors.ts";
import { formatIssue, formatPath, type LocatedIssue, type PathSeg, SourceMap } from "./locate.ts";
import { suggest } from "./names.ts";
import { normalize } from "./normalize.ts";
import { knownKeys, manifestSchema } from "./schema.ts";
import type { Manifest } from "./types.ts";

export const MANIFEST_FILE = "hermit.yaml";
const MAX_REPORTED = 20;

export class ManifestError extends HermitError {
  readonly issues: LocatedIssue[];
  constructor(issues: LocatedIssue[]) {
    const shown = issues.slice(0, MAX_REPORTED).map(formatIssue);
    if (issues.length > MAX_REPORTED) shown.push(`… and ${issues.length - MAX_REPORTED} more problems`);
    super(shown.join("\n"), Exit.usage);
    this.name = "ManifestError";
    this.issues = issues;
  }
}

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

export function loadManifest(target: string): Manifest {
  return loadManifestWithSource(target).manifest;
}

export interface LoadedManifest {
  manifest: Manifest;
  /** Positions of fields in the file, for messages that point at a line. */
  source: SourceMap;
}

export function loadManifestWithSource(target: string): LoadedManifest {
  const { file, dir } = resolveManifestPath(target);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === "ENOENT"
      ? `not found; create one with 'hermit init ${displayPath(dir)}'`
      : `cannot be read (${code ?? "error"})`;
    throw new HermitError(`${displayPath(file)}: ${why}`, Exit.usage);
  }
  return parseManifest(text, file, dir);
}

/** Pure: the manifest in `text` (with its source positions), or a `ManifestError`. */
export function parseManifest(text: string, file: string, dir: string): LoadedManifest {
  const shown = displayPath(file);
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const src = new SourceMap(shown, doc, lines);

  if (doc.errors.length > 0) {
    throw new ManifestError(doc.errors.map((e) => {
      const { line, col } = src.position(e.pos[0]);
      return { file: shown, line, col, path: "", message: `not valid YAML: ${firstLine(e.message)}` };
    }));
  }

  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    throw new ManifestError([{
      file: shown,
      line: 1,
      col: 1,
      path: "",
      message: `not valid YAML: ${firstLine(String((err as Error).message))}`,
    }]);
  }
  if (data === null || data === undefined) {
    throw new ManifestError([src.issue([], "the manifest is empty; it needs at least name: and exports:")]);
  }
  if (typeof data !== "object" || Array.isArray(data)) {
    throw new ManifestError([
      src.issue([], "the manifest must be a mapping of keys (name:, exports:, tools:, mcp_servers:, serve:)"),
    ]);
  }

  const parsed = manifestSchema.safeParse(data, { reportInput: true });
  if (!parsed.success) throw new ManifestError(parsed.error.issues.flatMap((i) => locateZodIssue(i, src)));

  const { manifest, errors } = normalize(parsed.data, src, file, dir);
  if (errors.length > 0) throw new ManifestError(errors);
  return { manifest, source: src };
}

function locateZodIssue(issue: z.core.$ZodIssue, src: SourceMap): LocatedIssue[] {
  const at = issue.path as PathSeg[];
  const where = formatPath(at);
  if (issue.code === "unrecognized_keys") {
    const known = knownKeys(at);
    return issue.keys.map((key) => {
      const guess = suggest(key, known);
      const hint = guess
        ? `did you mean '${guess}'?`
        : known.length
        ? `known keys here: ${known.join(", ")}`
        : "remove it";
      return src.issue([...at, key], `${formatPath([...at, key])}: unknown key; ${hint}`, { key: true });
    });
  }
  if (issue.code === "invalid_key") {
    return [src.issue(at, `${where}: '${String(at[at.length - 1])}' ${issue.message}`, { key: true })];
  }
  const missing = "input" in issue && issue.input === undefined && issue.code === "invalid_type";
  const message = missing ? `${where} is required; it ${issue.message}` : `${where} ${issue.message}`;
  return [src.issue(at, message)];
}

function firstLine(s: string): string {
  return s.split("\n")[0].trim();
}
