/**
 * Source positions for paths inside a parsed YAML document, and the one-line form every manifest
 * error takes: `file:line:col: message`.
 */
import { type Document, isMap, isPair, isScalar, isSeq, LineCounter, type Node } from "yaml";

export type PathSeg = string | number;

export interface LocatedIssue {
  file: string;
  line: number;
  col: number;
  /** Dotted path of the field, e.g. `tools.add_note.run` (empty for the whole file). */
  path: string;
  message: string;
}

export function formatPath(path: readonly PathSeg[]): string {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else out += out ? `.${seg}` : seg;
  }
  return out;
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
    let node: unknown = this.#doc?.contents;
    let offset = rangeStart(node) ?? 0;
    for (let i = 0; i < path.length; i++) {
      const seg = path[i];
      const last = i === path.length - 1;
      if (isMap(node)) {
        const pair = node.items.find((p) => isPair(p) && keyText(p.key) === String(seg));
        if (!pair) break;
        if (last && opts.key) {
          offset = rangeStart(pair.key) ?? offset;
          break;
        }
        node = pair.value;
        offset = rangeStart(node) ?? rangeStart(pair.key) ?? offset;
      } else if (isSeq(node) && typeof seg === "number") {
        const item = node.items[seg];
        if (item === undefined) break;
        node = item;
        offset = rangeStart(node) ?? offset;
      } else break;
    }
    return this.position(offset);
  }

  issue(path: readonly PathSeg[], message: string, opts: { key?: boolean } = {}): LocatedIssue {
    const { line, col } = this.locate(path, opts);
    return { file: this.file, line, col, path: formatPath(path), message };
  }
}

function keyText(key: unknown): string | undefined {
  if (isScalar(key)) return String(key.value);
  return undefined;
}

function rangeStart(node: unknown): number | undefined {
  const range = (node as Node | null | undefined)?.range;
  return range ? range[0] : undefined;
}
