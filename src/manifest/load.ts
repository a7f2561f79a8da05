/**
 * Loading `hermit.yaml`: read, parse YAML with positions, validate with zod, normalize. Whatever
 * the file holds, a bad one becomes a `ManifestError` holding one located `file:line:col: message`
 * line per problem (exit 2) and nothing else escapes; a missing or unreadable file is a plain
 * usage `HermitError` (exit 2).
 */
import { LineCounter, parseDocument } from "yaml";
import type { z } from "zod";
import { Exit, HermitError } from "../errors.ts";
import {
  describeBytes,
  FileTooLarge,
  MiB,
  NotAFile,
  NotUtf8,
  readTextCapped,
} from "../platform/read_capped.ts";
import { formatIssue, formatPath, type LocatedIssue, type PathSeg, quote, SourceMap } from "./locate.ts";
import { escaped, libraryLine, unseen, yamlSyntaxIssue } from "./yaml_errors.ts";
import { suggest } from "./names.ts";
import { normalize } from "./normalize.ts";
import { adapterNearby, displayPath, resolveManifestPath } from "./paths.ts";
import { knownKeys, manifestSchema } from "./schema.ts";
import type { Manifest } from "./types.ts";

export { displayPath, MANIFEST_FILE, resolveManifestPath } from "./paths.ts";

const MAX_REPORTED = 20;
/** A manifest is a few kilobytes; past this it is refused before parsing (a 100 MB one took GBs). */
export const MAX_MANIFEST_BYTES = 1 * MiB;

export class ManifestError extends HermitError {
  readonly issues: LocatedIssue[];
  constructor(issues: LocatedIssue[]) {
    // Top to bottom, as a person reads the file (the sort is stable for issues on one spot).
    issues = [...issues].sort((a, b) => a.line - b.line || a.col - b.col);
    const shown = issues.slice(0, MAX_REPORTED).map(formatIssue);
    if (issues.length > MAX_REPORTED) {
      // Still `file:line:col: message`, pointing at the first problem not shown.
      const next = issues[MAX_REPORTED];
      const more = issues.length - MAX_REPORTED;
      shown.push(
        formatIssue({ ...next, message: `… and ${more} more problem${more === 1 ? "" : "s"} from here on` }),
      );
    }
    super(shown.join("\n"), Exit.usage);
    this.name = "ManifestError";
    this.issues = issues;
  }
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
  return parseManifest(readManifestText(file, dir), file, dir);
}

/** The manifest's text, at most `MAX_MANIFEST_BYTES`; a usage error when missing, unreadable or huge. */
function readManifestText(file: string, dir: string): string {
  try {
    return readTextCapped(file, MAX_MANIFEST_BYTES);
  } catch (err) {
    if (err instanceof FileTooLarge) {
      const size = err.size === undefined ? "more than that" : `${err.size} bytes`;
      throw new HermitError(
        `${displayPath(file)}: too large (${size}); a manifest may be at most ${
          describeBytes(MAX_MANIFEST_BYTES)
        }: keep data out of hermit.yaml`,
        Exit.usage,
      );
    }
    if (err instanceof NotUtf8) {
      throw new HermitError(
        `${displayPath(file)}: not UTF-8 text (line ${err.line}); save it as UTF-8 (iconv -t UTF-8)`,
        Exit.usage,
      );
    }
    if (err instanceof NotAFile) {
      throw new HermitError(
        `${displayPath(file)}: not a regular file (a ${err.kind}); make it one`,
        Exit.usage,
      );
    }
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === "ENOENT"
      ? `not found; ${adapterNearby(dir) ?? `create one with 'hermit init ${displayPath(dir)}'`}`
      : `cannot be read (${code ?? "error"})`;
    throw new HermitError(`${displayPath(file)}: ${why}`, Exit.usage);
  }
}

/** Pure: the manifest in `text` (with its source positions), or a `ManifestError`. */
export function parseManifest(text: string, file: string, dir: string): LoadedManifest {
  const shown = displayPath(file);
  const lines = new LineCounter();
  // Plain data only: resolveKnownTags off keeps `!!binary`, `!!set`, `!!timestamp` from becoming a
  // Uint8Array, Set or Date. logLevel "error": the library's warnings must not reach stderr.
  const doc = parseDocument(text, {
    lineCounter: lines,
    prettyErrors: false,
    uniqueKeys: true,
    resolveKnownTags: false,
    logLevel: "error",
  });
  const src = new SourceMap(shown, doc, lines);

  if (doc.errors.length > 0) {
    // one line: the cause, not the parser's follow-on complaints
    const cause = yamlSyntaxIssue(doc.errors, text);
    const { line, col } = src.position(cause.offset);
    throw new ManifestError([{
      file: shown,
      line,
      col,
      path: "",
      message: `not valid YAML: ${cause.message}`,
    }]);
  }

  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    throw new ManifestError([toJsIssue(String((err as Error)?.message ?? err), text, src)]);
  }
  if (data === null || data === undefined) {
    throw new ManifestError([
      src.issue(
        [],
        "the manifest is empty; it needs at least a name (name: my-tools), and exports: { tools: […] } to serve tools",
      ),
    ]);
  }
  if (typeof data !== "object" || Array.isArray(data)) {
    throw new ManifestError([
      src.issue([], "the manifest must be a mapping of keys (name:, exports:, tools:, mcp_servers:, serve:)"),
    ]);
  }

  // zod skips `__proto__` keys without a word (and a plain object cannot hold one): refuse them.
  const proto = protoKeys(data);
  if (proto.length > 0) {
    throw new ManifestError(
      proto.map((at) =>
        src.issue(at, `${formatPath(at)}: '__proto__' cannot be used as a name; choose another`, {
          key: true,
        })
      ),
    );
  }

  const parsed = manifestSchema.safeParse(data, { reportInput: true });
  if (!parsed.success) throw new ManifestError(parsed.error.issues.flatMap((i) => locateZodIssue(i, src)));

  const { manifest, errors } = normalize(parsed.data, src, file, dir);
  if (errors.length > 0) throw new ManifestError(errors);
  for (const w of doc.warnings) {
    const { line, col } = src.position(w.pos[0]);
    manifest.warnings.push({ file: shown, line, col, path: "", message: `YAML: ${libraryLine(w.message)}` });
  }
  manifest.warnings.sort((a, b) => a.line - b.line || a.col - b.col);
  return { manifest, source: src };
}

/** Turning the document into data failed: an alias bomb, a missing anchor, absurd nesting. */
function toJsIssue(message: string, text: string, src: SourceMap): LocatedIssue {
  // not trimmed: an alias's name may be a character that does not show (a byte order mark)
  const unresolved = /^Unresolved alias[^:]*: (.+)$/s.exec(message.split("\n")[0])?.[1];
  if (unresolved !== undefined) {
    const at = text.indexOf(`*${unresolved}`);
    const { line, col } = src.position(Math.max(at, 0));
    return {
      file: src.file,
      line,
      col,
      path: "",
      message: unseen(unresolved)
        ? `not valid YAML: the alias * is followed by ${
          escaped(unresolved)
        }, an invisible character, and names no anchor; remove it, or quote a value that starts with *`
        : `not valid YAML: alias *${unresolved} has no anchor &${unresolved} before it; define the anchor first`,
    };
  }
  const why = /excessive alias/i.test(message)
    ? "too many aliases (*name) to expand; write the values out instead"
    : /call stack/i.test(message)
    ? "nested too deeply"
    : libraryLine(message);
  return { file: src.file, line: 1, col: 1, path: "", message: `not valid YAML: ${why}` };
}

/** Paths (ending in the key itself) of every `__proto__` key in `data`; iterative, so depth is no risk. */
function protoKeys(data: unknown): PathSeg[][] {
  const out: PathSeg[][] = [];
  const stack: [unknown, PathSeg[]][] = [[data, []]];
  while (stack.length > 0) {
    const [v, at] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (!Array.isArray(v) && Object.hasOwn(v, "__proto__")) out.push([...at, "__proto__"]);
    for (const [k, x] of Object.entries(v)) stack.push([x, [...at, Array.isArray(v) ? Number(k) : k]]);
  }
  return out;
}

function locateZodIssue(issue: z.core.$ZodIssue, src: SourceMap): LocatedIssue[] {
  const at = issue.path as PathSeg[];
  const where = formatPath(at);
  if (issue.code === "unrecognized_keys") {
    const known = knownKeys(at);
    return issue.keys.map((key) => {
      const guess = suggest(src.keySource([...at, key]) ?? key, known);
      const hint = key === "<<"
        ? "YAML merge keys are not supported; write the fields out"
        : guess
        ? `did you mean '${guess}'?`
        : known.length
        ? `known keys here: ${known.join(", ")}`
        : "remove it";
      const written = src.keySource([...at, key]) ?? key; // `0x1F:` is reported as 0x1F, not 31
      return src.issue([...at, key], `${formatPath([...at, written])}: unknown key; ${hint}`, { key: true });
    });
  }
  if (issue.code === "invalid_key") {
    const name = String(at[at.length - 1]);
    const why = issue.issues[0]?.message ?? issue.message;
    return [src.issue(at, `${formatPath(at.slice(0, -1))}: ${quote(name)} ${why}`, { key: true })];
  }
  const missing = "input" in issue && issue.input === undefined && issue.code === "invalid_type";
  const message = missing ? `${where} is required; it ${issue.message}` : `${where} ${issue.message}`;
  return [src.issue(at, message)];
}
