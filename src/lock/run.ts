/**
 * Starting an adapter's upstream servers for real to see what a lock should hold: every enabled
 * upstream (a lazy one too) is started in process under the watchdog, with the versions the
 * manifest asks for (`hermit lock`) or those the lock pins (`check`'s comparison); then each one's
 * exported tools, its `serverInfo` and the package version that ran are read, and the result is
 * compared with the lock on disk. Nothing is written here.
 */
import process from "node:process";
import { Exit, HermitError } from "../errors.ts";
import { childEnv } from "../gates/env.ts";
import { SAFE_MODE_NOTICE, safeMode } from "../gates/safe_mode.ts";
import { type ScanFinding, scanTool } from "../gates/scan.ts";
import { refusalLine, screenManifest } from "../gates/screen_manifest.ts";
import { contextFrom, interpolate } from "../manifest/interpolate.ts";
import { setOwn } from "../platform/own.ts";
import { waitingOn } from "../progress.ts";
import type { Manifest, Upstream } from "../manifest/types.ts";
import { startLabel } from "../check/live.ts";
import { withGateway } from "../mcp/diagnostics.ts";
import type { LiveUpstream } from "../mcp/gateway.ts";
import { entryRegistry } from "./registry.ts";
import { buildLock, compareLocks, type LiveServer, type LockChanges } from "./build.ts";
import { readLockState } from "./file.ts";
import { isPinnable, packageOf, type PackageRef, parsePythonSpec, pinHint } from "./packages.ts";
import { extraVersionsThatRan, versionThatRan } from "./resolve.ts";
import type { Lock, LockState } from "./types.ts";

export interface LockRun {
  previous: LockState;
  next: Lock;
  changes: LockChanges;
  /** Upstreams that did not start (nothing may be written then). */
  failures: { server: string; why: string }[];
  /** Things worth saying: a package whose version could not be told, … */
  notes: string[];
  /** Description-scan findings in the definitions that are new or changed. */
  findings: { server: string; finding: ScanFinding }[];
  /** Per server that ran, the raw names of every tool it offers (exported or not). */
  offered: Record<string, string[]>;
}

export interface CollectOptions {
  /** `off`: run what hermit.yaml says (`hermit lock`); `pin`: run what the lock pins (check). */
  versions: "manifest" | "locked";
  /** Only these servers (hermit add); the others keep their lock entries. */
  only?: string[];
  verbose?: boolean;
  env?: Readonly<Record<string, string | undefined>>;
}

export async function collectLock(m: Manifest, opts: CollectOptions): Promise<LockRun> {
  const env = opts.env ?? process.env;
  if (safeMode(env)) throw new HermitError(`refused: ${SAFE_MODE_NOTICE}`, Exit.refused);
  const refusals = screenManifest(m);
  if (refusals.length) throw new HermitError(refusals.map(refusalLine).join("\n"), Exit.refused);
  const previous = readLockState(m.dir);
  const chosen = Object.values(m.upstreams).filter((u) =>
    u.enabled && (!opts.only || opts.only.includes(u.name))
  );
  const scoped: Manifest = { ...m, upstreams: Object.fromEntries(chosen.map((u) => [u.name, u])) };
  const failures: LockRun["failures"] = [];
  const notes: string[] = [];
  const live: LiveServer[] = [];
  const offered: LockRun["offered"] = {};
  // starting them may take a while (an npx download): said at a terminal, as check's live start is
  const waiting = waitingOn(startLabel(scoped));
  await withGateway(scoped, opts.verbose ?? false, async (g) => {
    // a lazy upstream answered from the schema cache: the lock needs it live (liveUpstreams starts it)
    const running = new Map((await g.liveUpstreams()).map((u) => [u.name, u]));
    for (const u of chosen) {
      const conn = running.get(u.name);
      if (!conn || !conn.connected) {
        failures.push({ server: u.name, why: conn?.lastError ?? "it did not start" });
        continue;
      }
      live.push(liveServer(m, u, conn, env, notes));
      setOwn(offered, u.name, conn.tools.map((t) => t.raw));
    }
  }, { lock: opts.versions === "locked" ? "pin" : "off" }).finally(() => waiting.done());
  // kept as locked: servers not chosen (hermit add), and those that did not start, which were not
  // seen at all (their tools are not "removed"; nothing is written while one fails)
  const unseen = (n: string) =>
    (opts.only !== undefined && !opts.only.includes(n)) || failures.some((f) => f.server === n);
  const keep = previous.kind === "ok"
    ? Object.fromEntries(Object.entries(previous.lock.servers).filter(([n]) => unseen(n)))
    : {};
  const next = buildLock(live, keep);
  const changes = compareLocks(previous.kind === "ok" ? previous.lock : undefined, next);
  const findings = changes.tools.filter((c) => c.after).flatMap((c) =>
    scanTool(c.after as { name: string }).map((finding) => ({ server: c.server, finding }))
  );
  return { previous, next, changes, failures, notes, findings, offered };
}

function liveServer(
  m: Manifest,
  u: Upstream,
  conn: LiveUpstream,
  env: Readonly<Record<string, string | undefined>>,
  notes: string[],
): LiveServer {
  const exported = new Set(m.exports.tools);
  const serverInfo = conn.serverInfo;
  const ref = packageOf(u.command, u.args);
  let version: string | undefined;
  let extras: Record<string, string> | undefined;
  if (isPinnable(ref)) {
    const { value } = interpolate(u.env, contextFrom(env, process.cwd()));
    version = versionThatRan(ref, conn.pid, childEnv(env, value, process.platform));
    extras = extrasThatRan(u.name, ref, conn.pid, notes);
    if (!version && !ref.exact) {
      notes.push(
        `mcp_servers.${u.name}: could not tell which version of ${ref.name} ${ref.via} ran; pin it in hermit.yaml (${
          pinHint(ref)
        })`,
      );
    }
  }
  return {
    upstream: u,
    tools: conn.tools.filter((t) => exported.has(t.exported)),
    serverInfo: serverInfo ? { name: serverInfo.name, version: serverInfo.version } : undefined,
    version,
    extras,
    registry: u.kind === "stdio" ? entryRegistry(u, m.dir) : undefined,
  };
}

/** uv: the version of each package `--with` added that ran (an exact one asked for, as asked). */
function extrasThatRan(server: string, ref: PackageRef, pid: number | undefined, notes: string[]) {
  const wanted = ref.extras.flatMap((e) => e.packages).filter((p) => p.name);
  if (!wanted.length) return undefined;
  const ran = extraVersionsThatRan(ref, wanted.map((p) => p.name!), pid);
  for (const p of wanted) {
    if (ran[p.name!] || !p.exact) continue;
    const asked = parsePythonSpec(p.text);
    if (!("why" in asked) && asked.requested) ran[p.name!] = asked.requested;
  }
  const unknown = wanted.filter((p) => !ran[p.name!]).map((p) => p.name!);
  if (unknown.length) {
    notes.push(
      `mcp_servers.${server}: could not tell which version of ${
        unknown.join(", ")
      } ${ref.via} --with ran; pin it in hermit.yaml (${unknown[0]}==X.Y.Z)`,
    );
  }
  return ran;
}
