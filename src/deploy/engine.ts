/**
 * Deciding what to write, in memory: for a deploy, every item the hosts want (merged across hosts,
 * each with its owners `<adapter>/<host>`) against the record of what hermit wrote before and what
 * the files hold now; for a removal, the items those owners own. Ownership rules: an item hermit
 * did not write is replaced only with `--force` (and put back on removal); one the user changed
 * since hermit wrote it is overwritten or removed only with `--force`; an item shared by several
 * owners (AGENTS.md for Codex and OpenCode) goes when the last owner does. What the files hold
 * and the edits themselves are item_files.ts.
 */
import type { Item } from "../hosts/types.ts";
import { desiredHash, ItemFiles } from "./item_files.ts";
import type { Workspace } from "./ops.ts";
import { type DeployState, fromStored, itemKey, type ItemRecord, toStored } from "./state.ts";

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

export class Engine {
  readonly outcomes: Outcome[] = [];
  readonly conflicts: string[] = [];
  readonly warnings: string[] = [];
  /** The files' side: what they hold for an item, and the edits. */
  private readonly files: ItemFiles;

  constructor(
    private readonly state: DeployState,
    ws: Workspace,
    private readonly root: string,
    private readonly force: boolean,
    private readonly show: (file: string) => string,
    /** The record's file, for messages. */
    recordFile = "hermit's deploy record",
  ) {
    this.files = new ItemFiles(state, ws, root, show, recordFile);
  }

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
    const cur = this.files.current(item, item.file);
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
      this.files.write(item);
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
    const cur = this.files.current(rec, file);
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
    if (cur.found) this.files.undo(rec, file);
    this.files.settle(file, rec.format);
    const status = !cur.found ? "absent" : rec.previous === undefined ? "removed" : "restored";
    this.outcomes.push({ owners: gone, file, what: rec.what, status });
  }
}
