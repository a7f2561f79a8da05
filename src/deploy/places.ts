/**
 * Where hermit's hosts write in a project: the files their MCP entries and context blocks go in,
 * and the folders their skill, role and rule files go under, found by planning every host for a
 * probe adapter. A project's deploy record is taken only for items in those places. Anyone may
 * commit a record to a repository, and without this one could name any file of known contents
 * that git does not ship (`.git/config`, `node_modules/…`) for `--remove`, or a deploy, to
 * overwrite with a recorded `previous` or to delete.
 */
import path from "node:path";
import { Exit, HermitError } from "../errors.ts";
import { HOSTS } from "../hosts/index.ts";
import type { AdapterParts, HostFs, Target } from "../hosts/types.ts";
import { type DeployState, fromStored } from "./state.ts";

export interface Places {
  /** Files an entry or a block goes in (absolute). */
  files: Set<string>;
  /** Files only a block goes in, as a host's settings may name them (absolute). */
  blocks: Set<string>;
  /** Folders whole files go under, at any depth (absolute). */
  roots: Set<string>;
}

const PROBE = "hermit-probe";

/** An adapter with one of everything, its names marking where a name goes in a host's paths. */
function probeAdapter(): AdapterParts {
  return {
    name: `${PROBE}-adapter`,
    dir: path.join(path.sep, PROBE),
    launch: { kind: "stdio", command: "hermit", args: [] },
    context: "probe",
    skills: [{ name: `${PROBE}-skill`, files: [{ rel: "SKILL.md", content: new Uint8Array() }] }],
    roles: [{ file: "", name: `${PROBE}-role`, description: "probe", fields: {}, body: "", problems: [] }],
    tools: [],
  };
}

/**
 * Every host's places in `t`, as it would plan them with the disk as `fs` shows it, with nothing
 * there, with everything there, and with only each of `recorded` there: a host that picks among
 * files by which exists (OpenCode) counts with the one it picked when it wrote there. And with
 * settings that name each of `recorded`: a host that picks its context file by what its settings
 * name (Gemini's `context.fileName`, a name in the project's root) counts with the one it wrote
 * to before the user changed the setting. Such a file only ever holds a block: hermit changes
 * nothing there but the text between its own markers.
 */
export function hostPlaces(t: Target, fs: HostFs, recorded: string[] = []): Places {
  const places: Places = { files: new Set(), blocks: new Set(), roots: new Set() };
  const nothing = (): undefined => undefined;
  const views: HostFs[] = [
    fs,
    { exists: () => false, read: nothing },
    { exists: () => true, read: nothing },
    ...[...new Set(recorded)].map((only) => ({
      exists: (p: string) => path.resolve(p) === only,
      read: nothing,
    })),
  ];
  const named: HostFs[] = [...new Set(recorded)].map((only) => ({
    exists: () => false,
    read: (p: string) => settingsNaming(p, path.basename(only)),
  }));
  const probe = probeAdapter();
  for (const host of Object.values(HOSTS)) {
    for (const view of views) {
      for (const item of host.plan(probe, t, view).items) {
        const file = path.resolve(item.file);
        if (item.kind !== "file") places.files.add(file);
        else places.roots.add(rootOf(file));
      }
    }
    for (const view of named) {
      for (const item of host.plan(probe, t, view).items) {
        if (item.kind === "block") places.blocks.add(path.resolve(item.file));
      }
    }
  }
  return places;
}

/** A host's `settings.json` whose context file is `name` (other files: none). Pure. */
function settingsNaming(file: string, name: string): string | undefined {
  return path.basename(file) === "settings.json"
    ? JSON.stringify({ context: { fileName: name } })
    : undefined;
}

/** The folder above the first path segment that holds a probe name (where the name goes). */
function rootOf(file: string): string {
  const parts = file.split(path.sep);
  const at = parts.findIndex((p) => p.includes(PROBE));
  return parts.slice(0, at < 0 ? parts.length - 1 : at).join(path.sep) || path.sep;
}

/** Pure: why the item at `abs` (of `kind`) is not in a place a host writes, or undefined. */
export function placeProblem(places: Places, kind: string, abs: string): string | undefined {
  if (kind === "block" && places.blocks.has(abs)) return undefined;
  if (kind !== "file") return places.files.has(abs) ? undefined : "no host keeps an entry or a block there";
  for (const root of places.roots) {
    const rel = path.relative(root, abs);
    if (rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel)) return undefined;
  }
  return "no host keeps a skill, role or rule file there";
}

/** Refuse a project record with an item outside the hosts' places, naming the record, the item and the fix. */
export function checkItemPlaces(
  state: DeployState,
  root: string,
  recordFile: string,
  t: Target,
  fs: HostFs,
): void {
  const files = state.items.map((r) => path.resolve(fromStored(root, r.file)));
  const places = hostPlaces(t, fs, files);
  state.items.forEach((r, i) => {
    const problem = placeProblem(places, r.kind, files[i]);
    if (!problem) return;
    throw new HermitError(
      `${recordFile}: items[${i}] is for ${
        JSON.stringify(r.file)
      }, where ${problem}: hermit never wrote it; take that item out of the record, or delete the record (hermit then no longer knows what it wrote: its entries count as the user's own)`,
      Exit.usage,
    );
  });
}
