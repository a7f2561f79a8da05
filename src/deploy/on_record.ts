/**
 * Which adapter on the record a `--remove` means when its argument is not a readable adapter
 * directory (deleted, renamed, its hermit.yaml broken): the record knows each adapter by name
 * (owners `<name>/<host>`) and, for those deployed since it noted them, the directory it came
 * from. The argument matches an adapter by that name, or by that directory (resolved as a path,
 * as it was when deployed); it must match exactly one. Only adapter names count: a record is a
 * project's file, and a name is used to build paths (the backups of the last removal). Likewise
 * only hosts hermit knows: a removal from every host on record refuses an owner naming another. Pure.
 */
import path from "node:path";
import { Exit, HermitError } from "../errors.ts";
import { HOST_IDS, type HostId } from "../hosts/types.ts";
import { ADAPTER_NAME } from "../manifest/schema.ts";
import type { DeployState } from "./state.ts";

export interface RecordedAdapter {
  name: string;
  /** The directory it was deployed from, when the record notes it. */
  dir?: string;
}

const isAdapterName = (n: string) => n.length <= 64 && ADAPTER_NAME.test(n);

/** Every adapter on the record, by name. */
export function recordedAdapters(state: DeployState): RecordedAdapter[] {
  const names = new Set(Object.keys(state.adapters ?? {}));
  for (const item of state.items) {
    for (const o of item.owners) if (o.indexOf("/") > 0) names.add(o.slice(0, o.indexOf("/")));
  }
  return [...names].filter(isAdapterName).sort().map((name) => {
    const dir = Object.hasOwn(state.adapters ?? {}, name) ? state.adapters![name] : undefined;
    return dir === undefined ? { name } : { name, dir };
  });
}

/** The directories `arg` can mean: itself, or the folder of a hermit.yaml it names. */
function dirsMeant(arg: string, cwd: string): string[] {
  const abs = path.resolve(cwd, arg);
  return path.basename(abs) === "hermit.yaml" ? [abs, path.dirname(abs)] : [abs];
}

/** The recorded adapters `arg` could mean: by name, or by the directory it was deployed from. */
export function matchRecorded(recorded: RecordedAdapter[], arg: string, cwd: string): RecordedAdapter[] {
  const dirs = dirsMeant(arg, cwd);
  return recorded.filter((a) => a.name === arg || (a.dir !== undefined && dirs.includes(a.dir)));
}

/** A path from a record, on one line whatever it holds. */
const shownDir = (d: string) => /[\p{C}\p{Zl}\p{Zp}]/u.test(d) ? JSON.stringify(d) : d;
const quoted = (s: string) => /[\p{C}\p{Zl}\p{Zp}']/u.test(s) ? JSON.stringify(s) : `'${s}'`;
const described = (a: RecordedAdapter) =>
  a.dir === undefined ? `'${a.name}'` : `'${a.name}' (deployed from ${shownDir(a.dir)})`;

/** `a, b or c` */
const either = (words: string[]) =>
  words.length < 2 ? words.join("") : `${words.slice(0, -1).join(", ")} or ${words[words.length - 1]}`;

/**
 * The adapter on the record that `arg` names, for a removal; an error (exit 2) when none does
 * (naming the record and what is on it) or when more than one could be meant (naming each, with
 * what names it alone). `unreadable` says why `arg` is not an adapter directory.
 */
export function adapterOnRecord(
  state: DeployState,
  arg: string,
  cwd: string,
  record: { file: string; exists: boolean },
  unreadable: string,
): RecordedAdapter {
  const recorded = recordedAdapters(state);
  const found = matchRecorded(recorded, arg, cwd);
  if (found.length === 1) return found[0];
  if (found.length === 0) {
    const on = recorded.length === 0
      ? `nothing is on hermit's record here (${record.file} ${
        record.exists ? "names no adapter" : "does not exist"
      })`
      : `nothing on hermit's record ${record.file} was deployed under that name or from there; on record: ${
        recorded.map(described).join(", ")
      }; give one of those names`;
    throw new HermitError(`${unreadable}, and ${on}`, Exit.usage);
  }
  // What names each one alone: its name, else the directory it came from.
  const alone = found.map((a) =>
    [a.name, a.dir].find((s) => s && matchRecorded(recorded, s, cwd).length === 1)
  )
    .filter((s): s is string => s !== undefined).map(shownDir);
  throw new HermitError(
    `${arg} could be ${
      found.length === 2 ? "either adapter" : "any of the adapters"
    } on hermit's record ${record.file}: ${either(found.map(described))}; ${
      alone.length ? `name the one to remove as ${either(alone)}; ` : ""
    }nothing was written`,
    Exit.usage,
  );
}

/**
 * The hosts the record has the adapter `name` on, for a removal from all of them; an error
 * (exit 2), decided before anything is written, when an owner names a host hermit does not know
 * (a hand-edited or planted record): it names the record, the item and the fix.
 */
export function hostsOnRecord(state: DeployState, name: string, file: string): HostId[] {
  const hosts = new Set<HostId>();
  let unknown: { owner: string; index: number } | undefined;
  state.items.forEach((item, index) => {
    for (const owner of item.owners.filter((o) => o.startsWith(`${name}/`))) {
      const host = owner.slice(name.length + 1);
      if ((HOST_IDS as readonly string[]).includes(host)) hosts.add(host as HostId);
      else unknown ??= { owner, index };
    }
  });
  const known = [...hosts];
  if (unknown === undefined) return known;
  throw new HermitError(
    `${file}: items[${unknown.index}].owners has ${quoted(unknown.owner)}, no host hermit knows (hosts: ${
      HOST_IDS.join(", ")
    }); take it out of that item's owners${
      known.length ? `, or remove ${name} from the hosts hermit knows with --host ${known.join(",")}` : ""
    }; nothing was written`,
    Exit.usage,
  );
}
