/**
 * `deploy` and `convert` end to end: load and screen the adapter (gate 1: a refused adapter writes
 * nothing, exit 4), plan every host, then under one machine-wide lock read the record, decide in
 * memory, refuse on conflicts, and either show the diff (`--dry-run`) or write: backups, atomic
 * file replacement, the directories created, the record. A run that changes nothing writes nothing.
 */
import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { Exit, HermitError } from "../errors.ts";
import { refusalLine, screenManifest } from "../gates/screen_manifest.ts";
import { EditError } from "../hosts/edit/lines.ts";
import { exists, readBytes, removeEmptyDir, removeFile, writeAtomic } from "../hosts/files.ts";
import { detectHosts, HOSTS, parseHosts } from "../hosts/index.ts";
import type { HostFs, HostId, HostPlan, Scope, Target } from "../hosts/types.ts";
import { loadManifest } from "../manifest/load.ts";
import { acquireLock } from "../platform/lock.ts";
import { stateDir as hermitStateDir } from "../platform/paths.ts";
import { adapterParts, remoteLaunch, stdioLaunch } from "./adapter.ts";
import { Engine, type Owned } from "./engine.ts";
import { type FileChange, Workspace } from "./ops.ts";
import { buildReport, type DeployReport } from "./report.ts";
import { type DeployState, fromStored, isEmptyState, loadState, toStored } from "./state.ts";

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

const diskFs: HostFs = {
  exists,
  read: (p) => {
    try {
      const b = readBytes(p);
      return b === undefined ? undefined : new TextDecoder().decode(b);
    } catch {
      return undefined; // a directory, unreadable: nothing to go by
    }
  },
};

/** Where the record and backups live for a scope. */
export function recordDir(o: Pick<DeployOptions, "scope" | "project" | "platform" | "env" | "home">): string {
  if (o.scope === "project") return path.join(o.project!, ".hermit");
  return path.join(hermitStateDir(o.platform, o.env, o.home), "convert");
}

export async function runDeploy(o: DeployOptions): Promise<DeployReport> {
  const m = loadManifest(o.adapter);
  if (!o.remove) {
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
  const lockDir = hermitStateDir(o.platform, o.env, o.home);
  mkdirSync(lockDir, { recursive: true });
  const lock = o.dryRun
    ? undefined
    : await acquireLock(path.join(lockDir, "deploy.lock"), o.lockTimeoutMs ?? 30_000);
  if (!o.dryRun && !lock) {
    throw new HermitError(
      `another hermit deploy or convert is running (lock ${path.join(lockDir, "deploy.lock")}); try again`,
    );
  }
  try {
    const state = loadState(recordFile);
    const hosts = chooseHosts(o, target, state, m.name);
    const plans: HostPlan[] = [];
    const ws = new Workspace(readBytes);
    const show = (f: string) => displayIn(root, f, o.scope);
    const engine = new Engine(state, ws, root, o.force, show);
    const owners = hosts.map((h) => `${m.name}/${h}`);
    try {
      if (o.remove) engine.remove(owners);
      else {
        const launch = o.serveUrl ? remoteLaunch(o.serveUrl) : stdioLaunch(m, o.self);
        const parts = adapterParts(m, launch);
        for (const h of hosts) plans.push(HOSTS[h].plan(parts, target, diskFs));
        engine.deploy(merge(plans, m.name), owners);
      }
    } catch (err) {
      if (err instanceof EditError) throw new HermitError(`${err.message}; nothing was written`, Exit.usage);
      throw err;
    }
    if (engine.conflicts.length) {
      throw new HermitError([...engine.conflicts, "nothing was written"].join("\n"), Exit.usage);
    }
    const changes = ws.changes();
    // Test hook: widen the read-modify-write window so that tests can show the lock closes it.
    const pause = Number(o.env.HERMIT_DEPLOY_PAUSE_MS ?? 0);
    if (pause > 0) await new Promise((r) => setTimeout(r, pause));
    if (!o.dryRun) commit(changes, state, root, dir, o.scope);
    return buildReport({ o, manifest: m, hosts, plans, engine, changes, root, recordFile, show });
  } finally {
    lock?.release();
  }
}

function chooseHosts(o: DeployOptions, t: Target, state: DeployState, name: string): HostId[] {
  const recorded = [...new Set(state.items.flatMap((r) => r.owners))]
    .filter((ow) => ow.startsWith(`${name}/`)).map((ow) => ow.slice(name.length + 1) as HostId);
  const parsed = o.hosts.length ? parseHosts(o.hosts) : o.remove ? "all" : parseHosts([]);
  if (parsed !== "all") return parsed;
  if (o.remove) return recorded;
  const found = detectHosts(t, diskFs);
  if (found.length === 0) {
    throw new HermitError(
      `--host all: no host's configuration found ${
        o.scope === "project" ? "in the project or " : ""
      }under ${o.home}; name hosts with --host`,
      Exit.usage,
    );
  }
  return found;
}

/** Every host's items, one per target (file + key), with all the hosts that want it as owners. */
function merge(plans: HostPlan[], name: string): Owned[] {
  const byKey = new Map<string, Owned>();
  for (const p of plans) {
    for (const item of p.items) {
      const key = [
        item.kind,
        item.file,
        ...(item.kind === "entry" ? item.path : item.kind === "block" ? [item.id] : []),
      ].join("\0");
      const seen = byKey.get(key);
      if (seen) seen.owners.push(`${name}/${p.host}`);
      else byKey.set(key, { item, owners: [`${name}/${p.host}`] });
    }
  }
  return [...byKey.values()];
}

export function displayIn(root: string, file: string, scope: Scope): string {
  const rel = path.relative(root, file);
  if (rel.startsWith("..") || path.isAbsolute(rel)) return file;
  return scope === "user" ? `~/${rel}` : rel;
}

/** Write what changed: backups first, then each file atomically; then the record. */
function commit(changes: FileChange[], state: DeployState, root: string, dir: string, scope: Scope): void {
  const backup = path.join(dir, "backup");
  for (const c of changes) {
    if (c.before !== undefined) {
      const stored = toStored(root, c.file);
      const rel = path.isAbsolute(stored)
        ? path.join("_abs", stored.replace(/^[A-Za-z]:/, "").replace(/^[\\/]+/, ""))
        : stored;
      writeAtomic(path.join(backup, rel), c.before, 0o600);
    }
    if (c.after === undefined) removeFile(c.file);
    else {
      for (const d of writeAtomic(c.file, c.after)) {
        const s = toStored(root, d);
        if (!state.dirs.includes(s)) state.dirs.push(s);
      }
    }
  }
  for (const d of [...state.dirs].sort((a, b) => b.length - a.length)) {
    const abs = fromStored(root, d);
    if (state.items.some((r) => !path.relative(abs, fromStored(root, r.file)).startsWith(".."))) continue;
    removeEmptyDir(abs);
    state.dirs = state.dirs.filter((x) => x !== d);
  }
  const recordFile = path.join(dir, "deployed.json");
  if (isEmptyState(state)) {
    removeFile(recordFile);
    rmSync(backup, { recursive: true, force: true });
    if (scope === "project") {
      removeFile(path.join(dir, ".gitignore"));
      removeEmptyDir(dir);
    } else removeEmptyDir(dir);
    return;
  }
  const record = new TextEncoder().encode(JSON.stringify(state, null, 2) + "\n");
  const old = readBytes(recordFile);
  if (old && old.length === record.length && old.every((b, i) => b === record[i])) return;
  if (scope === "project" && readBytes(path.join(dir, ".gitignore")) === undefined) {
    writeAtomic(
      path.join(dir, ".gitignore"),
      new TextEncoder().encode("# hermit deploy's record and backups: per machine\n*\n"),
    );
  }
  writeAtomic(recordFile, record, 0o600);
}
