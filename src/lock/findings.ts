/**
 * Gate 9 as `check` findings. Static: whether the adapter has a usable hermit.lock (and, without
 * one, the recommendation to make one), entries the manifest no longer has or does not have yet and
 * those whose launch is not the one the lock holds (neither starts), and package runner entries
 * (`npx`, `npm exec`, `pnpm dlx`, `yarn dlx`, `bunx`, `uvx`, `uv tool run`, `pipx run`, `deno run
 * npm:…`) that name no exact version and are not pinned by the lock, or whose package hermit cannot
 * tell (an option it does not know, a runner started through `env` or a shell). Live (when the
 * health rule found tools missing): the adapter's servers started at their locked versions and
 * compared with the lock, each changed tool shown as a diff.
 */
import process from "node:process";
import type { Finding } from "../check/static.ts";
import type { Manifest } from "../manifest/types.ts";
import { own } from "../platform/own.ts";
import { shellQuote } from "../platform/shell_quote.ts";
import { readLockState } from "./file.ts";
import { launchMismatch } from "./launch.ts";
import {
  isPinnable,
  packageOf,
  type PackageRef,
  pinHint,
  sameLockedPackage,
  type Unpinnable,
} from "./packages.ts";
import type { LockedPackage } from "./types.ts";
import { lockedExtra } from "./with_packages.ts";
import { changeLines, plural, toolLabel } from "./report.ts";

function shown(m: Manifest): string {
  return shellQuote(m.dir === process.cwd() ? "." : m.dir);
}

export function lockStaticFindings(m: Manifest): Finding[] {
  const out: Finding[] = [];
  const add = (level: Finding["level"], message: string) => out.push({ level, area: "lock", message });
  const upstreams = Object.values(m.upstreams).filter((u) => u.enabled);
  const state = readLockState(m.dir);
  const lockCmd = `hermit lock ${shown(m)}`;
  if (state.kind === "invalid") {
    add(
      "problem",
      `hermit.lock cannot be used (${state.why}): no upstream server starts; fix it (resolve a merge conflict) or review and rewrite it with '${lockCmd}'`,
    );
  } else if (state.kind === "none" && upstreams.length) {
    add(
      "warning",
      `no hermit.lock: a changed tool description or a new package release reaches hosts unreviewed; pin them with '${lockCmd}' and commit hermit.lock`,
    );
  } else if (state.kind === "ok") {
    const servers = state.lock.servers;
    const tools = Object.values(servers).reduce((n, s) => n + Object.keys(s.tools).length, 0);
    add(
      "ok",
      `hermit.lock pins ${plural(Object.keys(servers).length, "server")} and ${
        plural(tools, "tool definition")
      }`,
    );
    for (const name of Object.keys(servers)) {
      if (!own(m.upstreams, name)?.enabled) {
        add(
          "warning",
          `hermit.lock has an entry for mcp_servers.${name}, which is not in use; '${lockCmd}' removes it`,
        );
      }
    }
    for (const u of upstreams) {
      const entry = own(servers, u.name);
      const mismatch = entry && launchMismatch(u, entry, m.dir);
      if (!entry) {
        add(
          "problem",
          `mcp_servers.${u.name} is not in hermit.lock, so it is not started; review and lock it with '${lockCmd}'`,
        );
      } else if (mismatch) {
        add(
          "problem",
          `mcp_servers.${u.name} is not started: ${mismatch}; review it and accept it with '${lockCmd}'`,
        );
      }
    }
  }
  for (const u of upstreams) {
    const ref = packageOf(u.command, u.args);
    if (!ref) continue;
    if (!isPinnable(ref)) {
      add("warning", `mcp_servers.${u.name}: ${unpinnable(ref)}`);
      continue;
    }
    const locked = state.kind === "ok" ? own(state.lock.servers, u.name)?.package : undefined;
    const same = locked && sameLockedPackage(locked, ref) ? locked : undefined;
    for (const line of extraWarnings(ref, same, lockCmd)) add("warning", `mcp_servers.${u.name}: ${line}`);
    if (ref.exact) continue;
    if (locked && sameLockedPackage(locked, ref)) {
      add("ok", `mcp_servers.${u.name}: ${ref.name} is pinned by hermit.lock to ${locked.version}`);
    } else {
      add(
        "warning",
        `mcp_servers.${u.name}: '${ref.via} ${ref.spec}' runs whatever version is newest at each start; pin it in hermit.yaml (${
          pinHint(ref)
        }) or record the version that runs with '${lockCmd}'`,
      );
    }
  }
  return out;
}

/** uv's `--with` packages that run whatever version is newest, or that hermit cannot pin. */
function extraWarnings(ref: PackageRef, locked: LockedPackage | undefined, lockCmd: string): string[] {
  const out = ref.unread.map((o) =>
    `'${ref.via} ${o}' adds packages hermit cannot read, which are not pinned; name them with --with pkg==X.Y.Z`
  );
  for (const p of ref.extras.flatMap((e) => e.packages)) {
    if (p.why) out.push(`'${ref.via} --with ${p.text}' cannot be pinned: ${p.why}`);
    else if (!p.exact && !lockedExtra(locked?.with, p.name!)) {
      out.push(
        `'${ref.via} --with ${p.text}' runs whatever version is newest at each start; pin it in hermit.yaml (${p.name}==X.Y.Z) or record the version that runs with '${lockCmd}'`,
      );
    }
  }
  return out;
}

function unpinnable(ref: Unpinnable): string {
  if (ref.unclear) return `${ref.via} ${ref.why}: it is not pinned`;
  if (ref.through) {
    return `${ref.via} runs through ${ref.through}, which hermit does not read: the package it runs is not pinned; make ${ref.via} the entry's command`;
  }
  return `${ref.via} cannot be pinned: ${ref.why}`;
}

/** The servers at their locked versions, compared with the lock: every difference, with its diff. */
export async function lockLiveFindings(m: Manifest): Promise<Finding[]> {
  if (readLockState(m.dir).kind !== "ok") return [];
  const { collectLock } = await import("./run.ts");
  const run = await collectLock(m, { versions: "locked" });
  const lockCmd = `hermit lock ${shown(m)}`;
  const out: Finding[] = [];
  for (const c of run.changes.tools) {
    const label = toolLabel(m, c.server, c.raw);
    const diff = changeLines(c).map((l) => `\n             ${l}`).join("");
    if (c.kind === "removed") {
      // a tool the server still offers has left exports.tools: not a change of the server's
      const gone = !(own(run.offered, c.server) ?? []).includes(c.raw);
      out.push({
        level: "warning",
        area: "lock",
        message: gone
          ? `${label} is in hermit.lock but no longer offered`
          : `${label} is in hermit.lock but no longer exported; '${lockCmd}' drops it`,
      });
    } else {
      out.push({
        level: "problem",
        area: "lock",
        message: `${label} ${
          c.kind === "changed" ? "changed since hermit.lock" : "is not in hermit.lock"
        }; not served until '${lockCmd}' accepts it${diff}`,
      });
    }
  }
  for (const s of run.changes.servers.filter((s) => s.kind === "changed")) {
    out.push({
      level: "warning",
      area: "lock",
      message: `mcp_servers.${s.server} resolves differently: ${s.details.join("; ")}`,
    });
  }
  return out;
}
