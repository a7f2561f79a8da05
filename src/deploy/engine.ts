/**
 * Deciding what to write, in memory: for a deploy, every item the hosts want (merged across hosts,
 * each with its owners `<adapter>/<host>`) against the record of what hermit wrote before and what
 * the files hold now; for a removal, the items those owners own. Ownership rules: an item hermit
 * did not write is replaced only with `--force` (and put back on removal); one the user changed
 * since hermit wrote it is overwritten or removed only with `--force`; an item shared by several
 * owners (AGENTS.md for Codex and OpenCode) goes when the last owner does.
 */
import type { Created } from "../hosts/edit/json.ts";
import { rawBlock, readBlock, removeBlock, restoreBlock, setBlock } from "../hosts/edit/markdown.ts";
import type { ConfigFormat, Item } from "../hosts/types.ts";
import { EditError } from "../hosts/edit/lines.ts";
import { ENTRY_OPS, type EntryOps, isEmptyAt, isEmptyDoc, setVerified, type Workspace } from "./ops.ts";
import {
  type DeployState,
  type FileRecord,
  fromStored,
  itemKey,
  type ItemRecord,
  sha256,
  toStored,
  valueHash,
} from "./state.ts";

/**
 * `absent`: on record, no longer in its file (taken out by hand): only the record goes.
 * `restored`: taken away, and what it had replaced (`--force`) put back.
 */
export type Status =
  | "created"
  | "updated"
  | "replaced"
  | "unchanged"
  | "removed"
  | "restored"
  | "kept"
  | "absent";

export interface Outcome {
  owners: string[];
  file: string;
  what: string;
  status: Status;
}

export interface Owned {
  item: Item;
  owners: string[];
}

interface Current {
  found: boolean;
  hash?: string;
  raw?: string;
  editable: boolean;
}

const startsWith = (p: string[], prefix: string[]) => prefix.every((k, i) => p[i] === k);
const base64 = (b: Uint8Array) => btoa(Array.from(b, (c) => String.fromCharCode(c)).join(""));
const unbase64 = (s: string) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));

export class Engine {
  readonly outcomes: Outcome[] = [];
  readonly conflicts: string[] = [];
  readonly warnings: string[] = [];

  constructor(
    private readonly state: DeployState,
    private readonly ws: Workspace,
    private readonly root: string,
    private readonly force: boolean,
    private readonly show: (file: string) => string,
    /** The record's file, for messages. */
    private readonly recordFile = "hermit's deploy record",
  ) {
    this.onRecord = new Map(state.items.map((r, i) => [r, i]));
  }

  /** Each item's place in the record as read (items go as they are released). */
  private readonly onRecord: Map<ItemRecord, number>;

  /** Make the files hold `desired` for `owners`; what these owners had before and no longer want goes. */
  deploy(desired: Owned[], owners: string[]): void {
    const wanted = new Set(desired.map((d) => itemKey({ ...d.item, file: this.stored(d.item.file) })));
    for (const rec of [...this.state.items]) {
      if (!wanted.has(itemKey(rec)) && rec.owners.some((o) => owners.includes(o))) this.release(rec, owners);
    }
    for (const d of desired) this.apply(d);
  }

  /** Take away what `owners` own. */
  remove(owners: string[]): void {
    for (const rec of [...this.state.items]) {
      if (rec.owners.some((o) => owners.includes(o))) this.release(rec, owners);
    }
  }

  private stored(file: string): string {
    return toStored(this.root, file);
  }

  private apply({ item, owners }: Owned): void {
    const file = this.stored(item.file);
    const key = itemKey({ ...item, file });
    let rec = this.state.items.find((r) => itemKey(r) === key);
    const cur = this.current(item, item.file);
    const want = desiredHash(item);
    const where = `${this.show(item.file)}: ${item.what}`;
    const adapterOf = (o: string) => o.slice(0, o.indexOf("/"));
    const others = rec?.owners.map(adapterOf).filter((a) => a !== adapterOf(owners[0])) ?? [];
    let status: Status;
    if (others.length && want !== rec!.hash) {
      this.conflicts.push(`${where}: written by hermit for the adapter '${others[0]}'; rename one of them`);
      return;
    } else if (cur.found && cur.hash === want) status = "unchanged";
    else if (rec && cur.found && cur.hash !== rec.hash && !this.force) {
      this.conflicts.push(`${where}: changed since hermit wrote it; --force overwrites the change`);
      return;
    } else if (cur.found && !cur.editable) {
      this.conflicts.push(`${where}: written in a form hermit does not edit; change it by hand`);
      return;
    } else if (!rec && cur.found && !this.force) {
      this.conflicts.push(
        `${where}: already there and not written by hermit; --force replaces it (--remove puts it back)`,
      );
      return;
    } else {
      this.write(item);
      status = !cur.found ? "created" : rec ? "updated" : "replaced";
    }
    if (!rec) {
      rec = { kind: item.kind, file, what: item.what, owners: [], hash: want };
      if (item.kind === "entry") Object.assign(rec, { format: item.format, path: item.path });
      if (item.kind === "block") rec.id = item.id;
      // exactly what hermit writes (its record was lost: a fresh clone of committed host files) is
      // taken as hermit's again, so --remove takes it away rather than "restore" it as it is
      if (cur.found && status !== "unchanged") rec.previous = cur.raw;
      this.state.items.push(rec);
    }
    rec.hash = want;
    rec.what = item.what;
    for (const o of owners) if (!rec.owners.includes(o)) rec.owners.push(o);
    this.outcomes.push({ owners, file: item.file, what: item.what, status });
  }

  private release(rec: ItemRecord, owners: string[]): void {
    const gone = rec.owners.filter((o) => owners.includes(o));
    const left = rec.owners.filter((o) => !owners.includes(o));
    const file = fromStored(this.root, rec.file);
    if (left.length > 0) {
      rec.owners = left;
      const users = left.map((o) => o.replace(/^[^/]*\//, "")).join(", ");
      this.outcomes.push({
        owners: gone,
        file,
        what: `${rec.what} (kept: ${users} use it too)`,
        status: "unchanged",
      });
      return;
    }
    const cur = this.current(rec, file);
    if (cur.found && cur.hash !== rec.hash && !this.force) {
      // Still on record as theirs: a later --force (deploy or remove) deals with it.
      this.warnings.push(
        `${
          this.show(file)
        }: ${rec.what}: changed since hermit wrote it, so left in place (--force removes it)`,
      );
      this.outcomes.push({ owners: gone, file, what: rec.what, status: "kept" });
      return;
    }
    if (cur.found && !cur.editable) {
      // the user rewrote its form (a YAML flow mapping, a TOML inline table): taking its lines out
      // would take others' too, and doing nothing is no removal. Still theirs on record.
      const where = `${this.show(file)}: ${rec.what}`;
      this.warnings.push(
        `${where}: written in a form hermit does not edit, so left in place; take it out by hand`,
      );
      this.outcomes.push({ owners: gone, file, what: rec.what, status: "kept" });
      return;
    }
    this.state.items.splice(this.state.items.indexOf(rec), 1);
    if (cur.found) this.undo(rec, file);
    this.settle(file, rec.format);
    const status = !cur.found ? "absent" : rec.previous === undefined ? "removed" : "restored";
    this.outcomes.push({ owners: gone, file, what: rec.what, status });
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

  private write(item: Item): void {
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

  private undo(rec: ItemRecord, file: string): void {
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
  private settle(file: string, format: ItemRecord["format"]): void {
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

  private current(
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
