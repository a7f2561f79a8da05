/**
 * Host files that are one file under two names (a link: `CLAUDE.md → AGENTS.md`, `.cursor/mcp.json
 * → ../.mcp.json`). Hosts plan by name; left so, a run would edit two copies of one file in memory
 * (the last write winning) and record one item twice. Here each group of names that lead to one
 * file gets one name (the file's own when it is among them) for the plans' items and the record's
 * alike, so the file is edited once and an item shared by hosts is one item with their owners.
 * Where the hosts want different things at one place of that file, that is a conflict naming both
 * names. A name with no other is left as it is (a user's dotfile link keeps its name).
 */
import path from "node:path";
import type { HostPlan, Item } from "../hosts/types.ts";
import { desiredHash } from "./item_files.ts";
import { type DeployState, fromStored, itemKey, toStored } from "./state.ts";

export interface Aliases {
  /** The one name of the file `file` leads to (`file` itself when it has no other). */
  name(file: string): string;
  /** The names besides `file` that lead to the same file (empty when none). */
  others(file: string): string[];
}

/** Group `files` (absolute) by where they lead (`realOf`); only groups of two or more count. */
export function findAliases(files: string[], realOf: (file: string) => string): Aliases {
  const byReal = new Map<string, Set<string>>();
  for (const f of files) {
    const abs = path.resolve(f);
    const real = realOf(abs);
    byReal.set(real, (byReal.get(real) ?? new Set()).add(abs));
  }
  const chosen = new Map<string, string>();
  const group = new Map<string, string[]>();
  for (const [real, names] of byReal) {
    if (names.size < 2) continue;
    const all = [...names].sort();
    const one = names.has(real) ? real : all[0];
    group.set(one, all);
    for (const n of all) chosen.set(n, one);
  }
  const nameOf = (f: string) => chosen.get(path.resolve(f));
  return {
    name: (f) => nameOf(f) ?? f,
    others: (f) => (group.get(nameOf(f) ?? "") ?? []).filter((n) => n !== path.resolve(f)),
  };
}

/** The plans with every item's file under its one name. */
export function renamePlans(plans: HostPlan[], aliases: Aliases): HostPlan[] {
  return plans.map((p) => ({
    ...p,
    items: p.items.map((i): Item => ({ ...i, file: aliases.name(i.file) })),
  }));
}

/**
 * The record's items under their files' one names; two that became one item keep the first's
 * record (what it wrote, what it replaced) with the owners of both.
 */
export function renameRecord(state: DeployState, root: string, aliases: Aliases): void {
  const byKey = new Map<string, DeployState["items"][number]>();
  const kept: DeployState["items"] = [];
  for (const rec of state.items) {
    const file = toStored(root, aliases.name(fromStored(root, rec.file)));
    if (file !== rec.file && state.files[rec.file] && !state.files[file]) {
      state.files[file] = state.files[rec.file];
    }
    rec.file = file;
    const key = itemKey(rec);
    const first = byKey.get(key);
    if (!first) {
      byKey.set(key, rec);
      kept.push(rec);
    } else for (const o of rec.owners) if (!first.owners.includes(o)) first.owners.push(o);
  }
  state.items = kept;
}

/**
 * Where hosts want different things at one place of a file that has two names: in this run's
 * plans (`owners` per item, after `renamePlans`), or against what another host of the same
 * adapter has on record there. One line each, naming the names.
 */
export function linkedConflicts(
  items: { item: Item; owners: string[]; other?: Item; otherOwners?: string[] }[],
  state: DeployState,
  root: string,
  aliases: Aliases,
  show: (file: string) => string,
): string[] {
  const out: string[] = [];
  const names = (file: string) => [file, ...aliases.others(file)].map(show).join(" and ");
  const hostsOf = (owners: string[]) => owners.map((o) => o.slice(o.indexOf("/") + 1)).join(", ");
  for (const { item, owners, other, otherOwners } of items) {
    if (aliases.others(item.file).length === 0) continue;
    const say = (theirs: string[]) =>
      `${names(item.file)} are one file (a link), where ${hostsOf(owners)} and ${
        hostsOf(theirs)
      } want ${item.what} written differently; deploy only one of them (--host), or make the link a file of its own`;
    if (other && otherOwners && desiredHash(other) !== desiredHash(item)) {
      out.push(say(otherOwners));
      continue;
    }
    const key = itemKey({ ...item, file: toStored(root, item.file) });
    const rec = state.items.find((r) => itemKey(r) === key);
    const adapter = owners[0].slice(0, owners[0].indexOf("/"));
    const otherHosts = rec?.owners.filter((o) => o.startsWith(`${adapter}/`) && !owners.includes(o)) ?? [];
    if (rec && otherHosts.length && rec.hash !== desiredHash(item)) out.push(say(otherHosts));
  }
  return out;
}
