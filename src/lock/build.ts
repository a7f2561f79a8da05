/**
 * A lock from what really ran, and what changed against the previous one. Pure: the live facts
 * (each upstream's exported tools, its `serverInfo`, the package version that ran) come in, a
 * `Lock` and the list of changes (servers added, removed or resolving differently; tools added,
 * removed or changed, with both definitions for the diff) go out. "Out of date" means that list
 * is not empty: layout or comments in the file never count.
 */
import type { Upstream } from "../manifest/types.ts";
import { definitionOf, hashDefinition, type ToolDefinition } from "./definition.ts";
import { own, setOwn } from "../platform/own.ts";
import { isPinnable, packageOf } from "./packages.ts";
import { registrySettings } from "./registry.ts";
import type { Lock, LockedPackage, LockedServer } from "./types.ts";
import { LOCK_FORMAT } from "./types.ts";
import type { LiveTool } from "./verdict.ts";

/** One upstream as it ran: the manifest entry, its exported tools, and what it resolved to. */
export interface LiveServer {
  upstream: Upstream;
  tools: readonly LiveTool[];
  serverInfo?: { name: string; version: string };
  /** The package version that ran (npx/bunx/uvx entries), when it could be told. */
  version?: string;
  /** uv: the version of each package `--with` added that ran, by name. */
  extras?: Record<string, string>;
  /** The registry settings it ran with (`entryRegistry`: its env, options and project files). */
  registry?: string[];
}

export function lockEntry(s: LiveServer): LockedServer {
  const u = s.upstream;
  const entry: LockedServer = { tools: {} };
  const ref = packageOf(u.command, u.args);
  if (u.kind !== "stdio") entry.url = u.url;
  else if (isPinnable(ref)) {
    const version = s.version ?? (ref.exact ? ref.requested : undefined);
    if (version) {
      entry.package = { runner: ref.runner, name: ref.name, version };
      if (s.extras && Object.keys(s.extras).length) entry.package.with = { ...s.extras };
      const registry = s.registry ?? registrySettings(u.env, u.args);
      if (registry.length) entry.package.registry = registry;
    } else entry.command = [u.command, ...u.args].join(" ");
  } else entry.command = [u.command, ...u.args].join(" ");
  if (s.serverInfo) entry.server_info = { name: s.serverInfo.name, version: s.serverInfo.version };
  for (const t of s.tools) {
    const definition = definitionOf(t.tool);
    setOwn(entry.tools, t.raw, { sha256: hashDefinition(definition), definition });
  }
  return entry;
}

export function buildLock(servers: readonly LiveServer[], keep: Lock["servers"] = {}): Lock {
  const out: Lock = { format: LOCK_FORMAT, servers: { ...keep } };
  for (const s of servers) setOwn(out.servers, s.upstream.name, lockEntry(s));
  return out;
}

export interface ToolChange {
  server: string;
  raw: string;
  kind: "added" | "removed" | "changed";
  before?: ToolDefinition;
  after?: ToolDefinition;
}

export interface ServerChange {
  server: string;
  kind: "added" | "removed" | "changed";
  /** What it resolves to now, in words (`package x 1.0.0 → 1.1.0`, `url …`, `serverInfo …`). */
  details: string[];
}

export interface LockChanges {
  servers: ServerChange[];
  tools: ToolChange[];
}

export function isEmpty(c: LockChanges): boolean {
  return c.servers.length === 0 && c.tools.length === 0;
}

/** What `next` changes against `prev` (undefined: there was no lock). Sorted by server, then tool. */
export function compareLocks(prev: Lock | undefined, next: Lock): LockChanges {
  const servers: ServerChange[] = [];
  const tools: ToolChange[] = [];
  const before = prev?.servers ?? {};
  const names = [...new Set([...Object.keys(before), ...Object.keys(next.servers)])].sort();
  for (const name of names) {
    const a = own(before, name);
    const b = own(next.servers, name);
    if (!a) servers.push({ server: name, kind: "added", details: describe(b!) });
    else if (!b) servers.push({ server: name, kind: "removed", details: describe(a) });
    else {
      const details = resolutionChanges(a, b);
      if (details.length) servers.push({ server: name, kind: "changed", details });
    }
    const ta = a?.tools ?? {};
    const tb = b?.tools ?? {};
    for (const raw of [...new Set([...Object.keys(ta), ...Object.keys(tb)])].sort()) {
      const [was, is] = [own(ta, raw), own(tb, raw)];
      if (!was) tools.push({ server: name, raw, kind: "added", after: is!.definition });
      else if (!is) tools.push({ server: name, raw, kind: "removed", before: was.definition });
      else if (was.sha256 !== is.sha256) {
        tools.push({ server: name, raw, kind: "changed", before: was.definition, after: is.definition });
      }
    }
  }
  return { servers, tools };
}

/** A package as words: `uvx srv 1.0.0 (with a 1.2, b 3.4)`. */
function packageWords(p: LockedPackage): string {
  const extras = Object.keys(p.with ?? {}).sort().map((n) => `${n} ${p.with![n]}`);
  const from = p.registry?.length ? ` from ${p.registry.join(", ")}` : "";
  return `${p.runner} ${p.name} ${p.version}${extras.length ? ` (with ${extras.join(", ")})` : ""}${from}`;
}

function describe(s: LockedServer): string[] {
  return [
    ...(s.package ? [packageWords(s.package)] : []),
    ...(s.url !== undefined ? [`url ${s.url}`] : []),
    ...(s.command !== undefined ? [`command ${s.command}`] : []),
    ...(s.server_info ? [`serverInfo ${s.server_info.name} ${s.server_info.version}`] : []),
  ];
}

function resolutionChanges(a: LockedServer, b: LockedServer): string[] {
  const out: string[] = [];
  const pkg = (s: LockedServer) => s.package ? packageWords(s.package) : "none";
  if (pkg(a) !== pkg(b)) {
    const onlyVersion = a.package && b.package && a.package.name === b.package.name &&
      pkg(a) === pkg({ ...b, package: { ...b.package, version: a.package.version } });
    out.push(
      onlyVersion
        ? `${b.package!.name} ${a.package!.version} → ${b.package!.version}`
        : `package ${pkg(a)} → ${pkg(b)}`,
    );
  }
  if (a.url !== b.url) out.push(`url ${a.url ?? "none"} → ${b.url ?? "none"}`);
  if (a.command !== b.command) out.push(`command ${a.command ?? "none"} → ${b.command ?? "none"}`);
  const info = (s: LockedServer) => s.server_info ? `${s.server_info.name} ${s.server_info.version}` : "none";
  if (info(a) !== info(b)) out.push(`serverInfo ${info(a)} → ${info(b)}`);
  return out;
}
