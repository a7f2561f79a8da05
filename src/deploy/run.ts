/**
 * `deploy` and `convert` end to end: load and screen the adapter (gate 1: a refused adapter writes
 * nothing, exit 4), plan every host, then under the user's deploy lock read the record, decide in
 * memory, refuse on conflicts, and either show the diff (`--dry-run`: nothing written, not even
 * hermit's state directory) or commit (`commit.ts`: backups, atomic replacement undone on failure,
 * the directories created, the record). Host plans and the decisions read each file once, through
 * the same `Workspace` (`disk.ts`); one file under two names is one (`aliases.ts`). A run that
 * changes nothing writes nothing. In a project nothing leads out of it: not the record's paths,
 * not a host file's link, not a link in `.hermit/` (confine.ts).
 */
import { realpathSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { Exit, HermitError } from "../errors.ts";
import { refusalLine, screenManifest } from "../gates/screen_manifest.ts";
import { EditError } from "../hosts/edit/lines.ts";
import { exists } from "../hosts/files.ts";
import { type Detected, detectHosts, HOSTS, parseHosts } from "../hosts/index.ts";
import {
  HOST_IDS,
  type HostFs,
  type HostId,
  type HostPlan,
  type Scope,
  type Target,
} from "../hosts/types.ts";
import { loadManifest } from "../manifest/load.ts";
import type { Manifest } from "../manifest/types.ts";
import { stateDir as hermitStateDir } from "../platform/paths.ts";
import { stateLock } from "../platform/state_lock.ts";
import { adapterParts, expandedByHosts, remoteLaunch, serveTargetMissing, stdioLaunch } from "./adapter.ts";
import { commit, type Committed, refuseUnreplaceable } from "./commit.ts";
import { hostFs, readOrExplain, recordBytes } from "./disk.ts";
import {
  checkItemFiles,
  checkRecordInProject,
  confineToProject,
  realPathOf,
  refuseLinksIn,
} from "./confine.ts";
import { findAliases, linkedConflicts, renamePlans, renameRecord } from "./aliases.ts";
import { Engine, type Owned } from "./engine.ts";
import { desiredHash } from "./item_files.ts";
import { adapterOnRecord, hostsOnRecord } from "./on_record.ts";
import { Workspace } from "./ops.ts";
import { checkItemPlaces } from "./places.ts";
import { buildReport, type DeployReport } from "./report.ts";
import { adapterConflict, displayIn, forgetStrayDirs, fromStored, itemKey, noteAdapter } from "./state.ts";
import { loadState } from "./record_read.ts";

export interface DeployOptions {
  adapter: string;
  scope: Scope;
  /** The project directory (deploy). */
  project?: string;
  /** `--host` values as given; may be empty for a removal (every host on record). */
  hosts: string[];
  serveUrl?: string;
  dryRun: boolean;
  remove: boolean;
  force: boolean;
  platform: NodeJS.Platform;
  env: Readonly<Record<string, string | undefined>>;
  home: string;
  /** argv that starts this hermit (`selfCommand()`). */
  self: string[];
  lockTimeoutMs?: number;
}

/** Where the record and its backups live for a scope (see commit.ts for a run that empties it). */
export function recordDir(o: Pick<DeployOptions, "scope" | "project" | "platform" | "env" | "home">): string {
  if (o.scope === "project") return path.join(o.project!, ".hermit");
  return path.join(hermitStateDir(o.platform, o.env, o.home), "convert");
}

/** Why a removal's adapter argument is not a readable adapter (the record may still know it). */
interface Unreadable {
  unreadable: string;
}

/** The adapter's manifest; for a removal, why it cannot be read instead of an error. */
function loadAdapter(o: DeployOptions): Manifest | Unreadable {
  try {
    return loadManifest(o.adapter);
  } catch (err) {
    if (!o.remove || !(err instanceof HermitError)) throw err;
    if (!exists(path.resolve(o.adapter))) return { unreadable: `${o.adapter}: no such adapter directory` };
    return { unreadable: `${o.adapter}: not a readable adapter (${err.message.split("\n")[0]})` };
  }
}

export async function runDeploy(o: DeployOptions): Promise<DeployReport> {
  const loaded = loadAdapter(o);
  const m = "unreadable" in loaded ? undefined : loaded;
  if (m && !o.remove) {
    const refusals = screenManifest(m);
    if (refusals.length) {
      throw new HermitError([...refusals.map(refusalLine), "nothing was written"].join("\n"), Exit.refused);
    }
  }
  const target: Target = {
    scope: o.scope,
    platform: o.platform,
    env: o.env,
    home: o.home,
    project: o.project,
  };
  const root = o.scope === "project" ? o.project! : o.home;
  const dir = recordDir(o);
  const recordFile = path.join(dir, "deployed.json");
  const show = (f: string) => displayIn(root, f, o.scope);
  const stateDir = hermitStateDir(o.platform, o.env, o.home);
  const lock = o.dryRun ? undefined : await stateLock(
    stateDir,
    "deploy.lock",
    o.lockTimeoutMs ?? 30_000,
    "another hermit deploy or convert is running",
  );
  try {
    refuseLinksIn(dir, show);
    const recordBefore = recordBytes(recordFile);
    const state = loadState(recordFile);
    const realRoot = o.scope === "project" ? realpathSync(root) : undefined;
    if (realRoot) checkRecordInProject(state, root, recordFile);
    checkItemFiles(state, root, recordFile);
    forgetStrayDirs(state, root);
    const ws = new Workspace((f) => {
      if (realRoot) confineToProject(realRoot, f, show);
      return readOrExplain(f, show);
    }, show);
    // A removal whose directory is gone names the adapter as the record knows it (on_record.ts).
    const { name, dir: from } = m ?? adapterOnRecord(
      state,
      o.adapter,
      process.cwd(),
      { file: recordFile, exists: exists(recordFile) },
      (loaded as Unreadable).unreadable,
    );
    const fs = hostFs(ws, realRoot);
    // a project's record (anyone may commit one) is taken only for places a host writes
    if (realRoot) checkItemPlaces(state, root, recordFile, target, fs);
    const { hosts, detected } = chooseHosts(
      o,
      target,
      () => hostsOnRecord(state, name, recordFile),
      fs,
      recordFile,
    );
    const sameName = m && adapterConflict(state, m.name, m.dir, o.force);
    if (sameName) throw new HermitError(`${sameName}; nothing was written`, Exit.usage);
    const plans: HostPlan[] = [];
    const engine = new Engine(state, ws, root, o.force, show, recordFile);
    const owners = hosts.map((h) => `${name}/${h}`);
    try {
      if (m && !o.remove) {
        const unservable = o.serveUrl ? undefined : serveTargetMissing(m);
        if (unservable) throw new HermitError(`${m.file}: ${unservable}; nothing was written`, Exit.usage);
        const launch = o.serveUrl ? remoteLaunch(o.serveUrl) : stdioLaunch(m, o.self);
        const expanded = expandedByHosts(m, launch, hosts);
        if (expanded.length) {
          throw new HermitError([...expanded, "nothing was written"].join("\n"), Exit.usage);
        }
        const parts = adapterParts(m, launch);
        for (const h of hosts) plans.push(HOSTS[h].plan(parts, target, fs));
      }
      // one file under two names (a link) is edited, merged and recorded under one of them
      const aliases = findAliases([
        ...plans.flatMap((p) => p.items.map((i) => i.file)),
        ...state.items.map((r) => fromStored(root, r.file)),
      ], realPathOf);
      renameRecord(state, root, aliases);
      if (o.remove || !m) engine.remove(owners);
      else {
        const { owned, clashes } = merge(renamePlans(plans, aliases), m.name);
        const linked = linkedConflicts([...owned, ...clashes], state, root, aliases, show);
        if (linked.length) throw new HermitError([...linked, "nothing was written"].join("\n"), Exit.usage);
        engine.deploy(owned, owners);
      }
    } catch (err) {
      if (err instanceof EditError) throw new HermitError(`${err.message}; nothing was written`, Exit.usage);
      throw err;
    }
    if (engine.conflicts.length) {
      throw new HermitError([...engine.conflicts, "nothing was written"].join("\n"), Exit.usage);
    }
    noteAdapter(state, name, from);
    const changes = ws.changes();
    // Test hook: widen the read-modify-write window so that tests can show the lock closes it.
    const pause = Number(o.env.HERMIT_DEPLOY_PAUSE_MS ?? 0);
    if (pause > 0) await new Promise((r) => setTimeout(r, pause));
    let committed: Committed = {};
    if (!o.dryRun) {
      refuseUnreplaceable(changes, show);
      const stamp = new Date().toISOString().replace(/[:.]/g, "-");
      const removedBackups = path.join(stateDir, "removed", `${stamp}-${name}`);
      committed = commit(changes, state, {
        root,
        scope: o.scope,
        dir,
        recordFile,
        removedBackups,
        show,
        recordBefore,
      });
    }
    return buildReport({
      o,
      adapter: name,
      manifest: m,
      hosts,
      detected,
      plans,
      engine,
      changes,
      root,
      recordFile,
      show,
      recordExists: exists(recordFile),
      ...committed,
    });
  } finally {
    lock?.release();
  }
}

/**
 * The hosts of this run: `--host`; for a removal without it (or `all`), those on record; for
 * `all`, those in use here (`detectHosts`: in a project, the hosts with files in it) and those
 * the record has the adapter on (Hermes in a project may leave only AGENTS.md), each with what
 * showed it.
 */
function chooseHosts(
  o: DeployOptions,
  t: Target,
  recorded: () => HostId[],
  fs: HostFs,
  recordFile: string,
): { hosts: HostId[]; detected?: Detected[] } {
  const parsed = o.hosts.length ? parseHosts(o.hosts) : o.remove ? "all" : parseHosts([]);
  if (parsed !== "all") return { hosts: parsed };
  if (o.remove) return { hosts: recorded() };
  const found = detectHosts(t, fs);
  const onRecord = recorded().filter((h) => !found.some((d) => d.host === h));
  const detected = [...found, ...onRecord.map((host) => ({ host, sign: recordFile }))]
    .sort((a, b) => HOST_IDS.indexOf(a.host) - HOST_IDS.indexOf(b.host));
  if (detected.length) return { hosts: detected.map((d) => d.host), detected };
  if (t.scope === "user") {
    throw new HermitError(
      `--host all: no host's configuration found under ${o.home}; name hosts with --host`,
      Exit.usage,
    );
  }
  const mine = detectHosts({ ...t, scope: "user" }, fs).map((d) => d.host);
  throw new HermitError(
    `--host all: no host has files in ${t.project} yet (such as .mcp.json, .codex/, .cursor/, GEMINI.md); ` +
      (mine.length
        ? `name the hosts with --host, e.g. --host ${mine.join(",")} (set up for your user; ` +
          `hermit convert writes into their user configuration)`
        : `name the hosts with --host: ${HOST_IDS.join(", ")}`),
    Exit.usage,
  );
}

/** Two hosts' items for one place that differ: the first one kept, and the other. */
interface Clash extends Owned {
  other: Owned["item"];
  otherOwners: string[];
}

/**
 * Every host's items, one per target (file + key), with all the hosts that want it as owners (the
 * first host's item is written); where a later host's item differs, a clash (a conflict when the
 * file has two names: `linkedConflicts`).
 */
function merge(plans: HostPlan[], name: string): { owned: Owned[]; clashes: Clash[] } {
  const byKey = new Map<string, Owned>();
  const clashes: Clash[] = [];
  for (const p of plans) {
    for (const item of p.items) {
      const key = itemKey(item);
      const seen = byKey.get(key);
      const owner = `${name}/${p.host}`;
      if (seen && desiredHash(seen.item) !== desiredHash(item)) {
        clashes.push({ ...seen, owners: [...seen.owners], other: item, otherOwners: [owner] });
      }
      if (seen) seen.owners.push(owner);
      else byKey.set(key, { item, owners: [owner] });
    }
  }
  return { owned: [...byKey.values()], clashes };
}
