/**
 * One interface over the three config-file editors, plus the pending contents of every file a
 * run touches (`Workspace`): reads once from disk, edits in memory, and lists what changed, so
 * that a dry run, a conflict or an error writes nothing.
 */
import {
  type Created,
  type Found,
  type Json,
  readJson,
  removeJson,
  restoreJson,
  setJson,
} from "../hosts/edit/json.ts";
import { EditError } from "../hosts/edit/lines.ts";
import { readToml, removeToml, restoreToml, setToml } from "../hosts/edit/toml.ts";
import { readYaml, removeYaml, restoreYaml, setYaml } from "../hosts/edit/yaml.ts";
import type { ConfigFormat } from "../hosts/types.ts";
import { parseDocument } from "yaml";
import { valueHash } from "./state.ts";

export interface EntryOps {
  read(text: string, path: string[], file: string): Found & { editable?: boolean };
  set(text: string, path: string[], value: Json, created: Created, file: string): string;
  restore(text: string, path: string[], raw: string, file: string): string;
  remove(text: string, path: string[], interiors: Record<string, string>, file: string): string;
}

export const ENTRY_OPS: Record<ConfigFormat, EntryOps> = {
  json: { read: readJson, set: setJson, restore: restoreJson, remove: removeJson },
  yaml: { read: readYaml, set: setYaml, restore: restoreYaml, remove: removeYaml },
  toml: {
    read: readToml,
    set: (text, path, value, _created, file) => setToml(text, path, value as Record<string, Json>, file),
    restore: restoreToml,
    remove: (text, path, _interiors, file) => removeToml(text, path, file),
  },
};

/** True when the mapping at `path` exists and is empty. */
export function isEmptyAt(ops: EntryOps, text: string, path: string[], file: string): boolean {
  const found = ops.read(text, path, file);
  if (!found.found) return false;
  const v = found.value;
  return v === null || (typeof v === "object" && !Array.isArray(v) && Object.keys(v as object).length === 0);
}

/**
 * A document with nothing of anyone's left in it: whitespace, or (JSON, YAML, without a comment)
 * only objects that are empty or hold only such objects (YAML: or nothing, `key:`). Those are what
 * hermit's entries leave when the record misses a container hermit added for them. Pure.
 */
export function isEmptyDoc(text: string, format?: ConfigFormat): boolean {
  if (text.trim() === "") return true;
  try {
    if (format === "json") return holdsNothing(JSON.parse(text), false); // strict: no comment
    if (format === "yaml" && !text.includes("#")) {
      const doc = parseDocument(text);
      return doc.errors.length === 0 && holdsNothing(doc.toJS(), true);
    }
  } catch { /* not a document: something is in it */ }
  return false;
}

const holdsNothing = (v: unknown, nulls: boolean): boolean =>
  (nulls && v === null) ||
  (v !== null && typeof v === "object" && !Array.isArray(v) &&
    Object.values(v).every((x) => holdsNothing(x, nulls)));

/** Set, then read back: an editor that could not express the value is an error, not a surprise. */
export function setVerified(
  ops: EntryOps,
  text: string,
  path: string[],
  value: Json,
  created: Created,
  file: string,
): string {
  const out = ops.set(text, path, value, created, file);
  const back = ops.read(out, path, file);
  if (!back.found || valueHash(back.value) !== valueHash(value)) {
    throw new EditError(
      `${file}: could not write ${path.join(".")} so that it reads back; edit the file by hand`,
    );
  }
  return out;
}

const decoder = new TextDecoder("utf-8", { ignoreBOM: true, fatal: true });

/** The line (from 1) of the first byte of `bytes` (known not to be UTF-8) that is not UTF-8. Pure. */
export function badUtf8Line(bytes: Uint8Array): number {
  const valid = (n: number) => {
    try {
      new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(0, n), { stream: true });
      return true;
    } catch {
      return false;
    }
  };
  let lo = 0; // the longest prefix known valid (as a stream: a sequence cut at the end is not an error)
  for (let hi = bytes.length; lo < hi;) {
    const mid = Math.ceil((lo + hi) / 2);
    if (valid(mid)) lo = mid;
    else hi = mid - 1;
  }
  return bytes.subarray(0, lo).filter((b) => b === 0x0a).length + 1;
}
const encoder = new TextEncoder();

export function sameBytes(a: Uint8Array | undefined, b: Uint8Array | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

export interface FileChange {
  file: string;
  before?: Uint8Array;
  after?: Uint8Array;
}

export class Workspace {
  #before = new Map<string, Uint8Array | undefined>();
  #after = new Map<string, Uint8Array | undefined>();
  constructor(
    private readonly readFile: (file: string) => Uint8Array | undefined,
    private readonly show: (file: string) => string = (f) => f,
  ) {}

  bytes(file: string): Uint8Array | undefined {
    if (!this.#after.has(file)) {
      const b = this.readFile(file);
      this.#before.set(file, b);
      this.#after.set(file, b);
    }
    return this.#after.get(file);
  }

  /** The file as text; one that is not UTF-8 is an error (re-encoding it would corrupt it). */
  text(file: string): string | undefined {
    const b = this.bytes(file);
    if (b === undefined) return undefined;
    try {
      return decoder.decode(b);
    } catch {
      throw new EditError(
        `${this.show(file)}: not UTF-8 text (line ${
          badUtf8Line(b)
        }); hermit edits only UTF-8 files: convert it (iconv -t UTF-8) and run again`,
      );
    }
  }

  setBytes(file: string, bytes: Uint8Array | undefined): void {
    this.bytes(file);
    this.#after.set(file, bytes);
  }

  setText(file: string, text: string): void {
    this.setBytes(file, encoder.encode(text));
  }

  changes(): FileChange[] {
    return [...this.#after.entries()]
      .filter(([f, after]) => !sameBytes(this.#before.get(f), after))
      .map(([file, after]) => ({ file, before: this.#before.get(file), after }));
  }
}
