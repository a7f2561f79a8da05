/**
 * An item's side in its file, for the engine: what the file holds for it now (`current`: found,
 * its hash, the raw text to put back, whether hermit can edit its form), writing it (noting in the
 * record what the first write created: the file, containers, `{}` insides), taking it out or
 * putting back what it replaced (`undo`), and deleting a file hermit created once nothing of
 * hermit's is left in it (`settle`). The hash of what an item wants written (`desiredHash`).
 */
import type { Created } from "../hosts/edit/json.ts";
import { EditError } from "../hosts/edit/lines.ts";
import { rawBlock, readBlock, removeBlock, restoreBlock, setBlock } from "../hosts/edit/markdown.ts";
import type { ConfigFormat, Item } from "../hosts/types.ts";
import { ENTRY_OPS, type EntryOps, isEmptyAt, isEmptyDoc, setVerified, type Workspace } from "./ops.ts";
import { type DeployState, type FileRecord, type ItemRecord, sha256, toStored, valueHash } from "./state.ts";

/** What a file holds for an item. */
export interface Current {
  found: boolean;
  hash?: string;
  raw?: string;
  editable: boolean;
}

const startsWith = (p: string[], prefix: string[]) => prefix.every((k, i) => p[i] === k);
const base64 = (b: Uint8Array) => btoa(Array.from(b, (c) => String.fromCharCode(c)).join(""));
const unbase64 = (s: string) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));

export class ItemFiles {
  /** Each item's place in the record as read (items go as they are released). */
  private readonly onRecord: Map<ItemRecord, number>;

  constructor(
    private readonly state: DeployState,
    private readonly ws: Workspace,
    private readonly root: string,
    private readonly show: (file: string) => string,
    /** The record's file, for messages. */
    private readonly recordFile: string,
  ) {
    this.onRecord = new Map(state.items.map((r, i) => [r, i]));
  }

  private stored(file: string): string {
    return toStored(this.root, file);
  }

  private fileRecord(file: string): FileRecord {
    const stored = this.stored(file);
    let fr = this.state.files[stored];
    if (!fr) {
      const text = this.ws.text(file);
      fr = { created: text === undefined, containers: [], interiors: {} };
      if (text !== undefined && text.trim() === "") fr.blank = text;
      this.state.files[stored] = fr;
    }
    return fr;
  }

  write(item: Item): void {
    if (item.kind === "file") return this.ws.setBytes(item.file, item.content);
    const fr = this.fileRecord(item.file);
    const text = this.ws.text(item.file) ?? "";
    if (item.kind === "block") {
      return this.ws.setText(item.file, setBlock(text, item.id, item.text, this.show(item.file)));
    }
    const created: Created = { containers: [], interiors: {} };
    const out = setVerified(
      ENTRY_OPS[item.format],
      text,
      item.path,
      item.value,
      created,
      this.show(item.file),
    );
    for (const c of created.containers) {
      if (!fr.containers.some((x) => x.join("\0") === c.join("\0"))) fr.containers.push(c);
    }
    fr.interiors = { ...created.interiors, ...fr.interiors };
    this.ws.setText(item.file, out);
  }

  undo(rec: ItemRecord, file: string): void {
    if (rec.kind === "file") {
      return this.ws.setBytes(file, rec.previous === undefined ? undefined : unbase64(rec.previous));
    }
    const text = this.ws.text(file) ?? "";
    if (rec.kind === "block") {
      const id = rec.id!;
      return this.ws.setText(
        file,
        rec.previous === undefined
          ? removeBlock(text, id, this.show(file))
          : restoreBlock(text, id, rec.previous, this.show(file)),
      );
    }
    const ops = ENTRY_OPS[rec.format!];
    const show = this.show(file);
    if (rec.previous !== undefined) {
      const out = ops.restore(text, rec.path!, rec.previous, show);
      if (!readsBack(ops, out, rec.path!, rec.previous, show)) {
        throw new EditError(
          `${show}: ${rec.what}: what hermit replaced there, as ${this.recordFile} notes it (items[${
            this.onRecord.get(rec)
          }].previous), does not fit back in; repair that item or delete the record`,
        );
      }
      return this.ws.setText(file, out);
    }
    const fr = this.state.files[rec.file] ?? { created: false, containers: [], interiors: {} };
    let out = ops.remove(text, rec.path!, fr.interiors, show);
    // hermit added a container for an entry inside it: one off this entry's path is not its to take
    const onPath = fr.containers.filter((c) => c.length < rec.path!.length && startsWith(rec.path!, c));
    for (const c of onPath.sort((a, b) => b.length - a.length)) {
      const used = this.state.items.some((r) => r.file === rec.file && r.path && startsWith(r.path, c));
      if (!used && isEmptyAt(ops, out, c, show)) {
        out = ops.remove(out, c, fr.interiors, show);
        fr.containers = fr.containers.filter((x) => x !== c);
      }
    }
    this.ws.setText(file, out);
  }

  /** When no item of hermit's is left in `file`: delete it if hermit created it and it is empty. */
  settle(file: string, format: ItemRecord["format"]): void {
    const stored = this.stored(file);
    if (this.state.items.some((r) => r.file === stored)) return;
    const fr = this.state.files[stored];
    if (!fr) return;
    delete this.state.files[stored];
    const text = this.ws.text(file);
    if (text === undefined || !isEmptyDoc(text, format)) return;
    if (fr.created) this.ws.setBytes(file, undefined);
    else if (fr.blank !== undefined) this.ws.setText(file, fr.blank);
  }

  current(
    i: { kind: string; format?: ConfigFormat; path?: string[]; id?: string },
    file: string,
  ): Current {
    if (i.kind === "file") {
      const b = this.ws.bytes(file);
      return b === undefined
        ? { found: false, editable: true }
        : { found: true, hash: sha256(b), raw: base64(b), editable: true };
    }
    const text = this.ws.text(file);
    if (text === undefined) return { found: false, editable: true };
    if (i.kind === "block") {
      const body = readBlock(text, i.id!, this.show(file));
      return body === undefined
        ? { found: false, editable: true }
        : { found: true, hash: sha256(body), raw: rawBlock(text, i.id!, this.show(file)), editable: true };
    }
    const found = ENTRY_OPS[i.format!].read(text, i.path!, this.show(file));
    if (!found.found) return { found: false, editable: true };
    return { found: true, hash: valueHash(found.value), raw: found.raw, editable: found.editable !== false };
  }
}

/** True when `out` holds `raw` as the entry at `path` (a record's text, spliced in, may break the file). */
function readsBack(ops: EntryOps, out: string, path: string[], raw: string, file: string): boolean {
  try {
    const back = ops.read(out, path, file);
    return back.found && back.raw === raw;
  } catch {
    return false; // the file no longer parses
  }
}

export function desiredHash(item: Item): string {
  if (item.kind === "file") return sha256(item.content);
  if (item.kind === "block") return sha256(item.text);
  return valueHash(item.value);
}
