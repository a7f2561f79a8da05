/**
 * Source positions for paths inside a parsed YAML document, and the one-line form every manifest
 * error takes: `file:line:col: message`.
 */
import { type Document, isCollection, isMap, isPair, isScalar, isSeq, LineCounter, type Node } from "yaml";

export type PathSeg = string | number;

export interface LocatedIssue {
  file: string;
  line: number;
  col: number;
  /** Dotted path of the field, e.g. `tools.add_note.run` (empty for the whole file). */
  path: string;
  message: string;
}

/** `tools.add_note.run[0]`; a key that is not a plain word is quoted: `env["A B"]`, `rename["a.b"]`. */
export function formatPath(path: readonly PathSeg[]): string {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else if (!/^[\p{L}\p{N}_-]+$/u.test(seg)) out += `[${JSON.stringify(seg)}]`;
    else out += out ? `.${seg}` : seg;
  }
  return out;
}

/** A value from the file, quoted for a one-line message: `'read_file'`, or JSON when it needs escapes. */
export function quote(value: string): string {
  return /^[^\p{C}'\\]*$/u.test(value) ? `'${value}'` : JSON.stringify(value);
}

export function formatIssue(issue: LocatedIssue): string {
  return `${issue.file}:${issue.line}:${issue.col}: ${issue.message}`;
}

export class SourceMap {
  readonly #doc: Document.Parsed | undefined;
  readonly #lines: LineCounter;
  readonly file: string;

  constructor(file: string, doc: Document.Parsed | undefined, lines: LineCounter) {
    this.file = file;
    this.#doc = doc;
    this.#lines = lines;
  }

  position(offset: number): { line: number; col: number } {
    const { line, col } = this.#lines.linePos(offset);
    return { line: Math.max(line, 1), col: Math.max(col, 1) };
  }

  /**
   * The position of the deepest node along `path` that exists. With `key: true` the position is
   * that of the last segment's key (for unknown keys), not of its value.
   */
  locate(path: readonly PathSeg[], opts: { key?: boolean } = {}): { line: number; col: number } {
    return this.position(this.#walk(path, opts.key ?? false).offset);
  }

  /** The last segment's key as written (`0x1F`, not `31`), when `path` leads to a scalar key. */
  keySource(path: readonly PathSeg[]): string | undefined {
    const { key } = this.#walk(path, true);
    return isScalar(key) && typeof key.source === "string" ? key.source : undefined;
  }

  #walk(path: readonly PathSeg[], toKey: boolean): { offset: number; key?: unknown } {
    let node: unknown = this.#doc?.contents;
    let offset = rangeStart(node) ?? 0;
    for (let i = 0; i < path.length; i++) {
      const seg = path[i];
      if (isMap(node)) {
        // The last pair wins, as it does when the document becomes data.
        const pair = node.items.findLast((p) => isPair(p) && sameKey(p.key, String(seg)));
        if (!pair) break;
        if (i === path.length - 1 && toKey) return { offset: rangeStart(pair.key) ?? offset, key: pair.key };
        node = pair.value;
        offset = rangeStart(node) ?? rangeStart(pair.key) ?? offset;
      } else if (isSeq(node) && typeof seg === "number") {
        const item = node.items[seg];
        if (item === undefined) break;
        node = item;
        offset = rangeStart(node) ?? offset;
      } else break;
    }
    return { offset };
  }

  issue(path: readonly PathSeg[], message: string, opts: { key?: boolean } = {}): LocatedIssue {
    const { line, col } = this.locate(path, opts);
    return { file: this.file, line, col, path: formatPath(path), message };
  }
}

/**
 * A key as it is named once the document is data: `null` and `~` become "", numbers and booleans
 * their `String()`, a collection its flow form (compared without spaces and quotes).
 */
function keyText(key: unknown): string | undefined {
  if (isScalar(key)) return key.value === null || key.value === undefined ? "" : String(key.value);
  if (isCollection(key)) return flat(String(key));
  return undefined;
}

const flat = (s: string) => s.replace(/[\s"']/g, "");

function sameKey(key: unknown, seg: string): boolean {
  return isCollection(key) ? keyText(key) === flat(seg) : keyText(key) === seg;
}

function rangeStart(node: unknown): number | undefined {
  const range = (node as Node | null | undefined)?.range;
  return range ? range[0] : undefined;
}
