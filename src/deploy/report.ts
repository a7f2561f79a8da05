/**
 * What a deploy, convert or removal did, per host: each item with the file it is in and what
 * happened to it, the parts the host cannot take, what the user has to do (trust, approval, the
 * token variable), how to reconnect, name-budget warnings; the files changed and where their
 * backups are; for a standalone adapter the path of its service instructions; for `--dry-run` the
 * unified diff. As JSON and text.
 */
import { createTwoFilesPatch } from "diff";
import path from "node:path";
import { type Detected, HOSTS, nameBudgetWarning } from "../hosts/index.ts";
import { type HostId, type HostPlan, type Scope, TOKEN_VAR } from "../hosts/types.ts";
import { hostToolName } from "../manifest/names.ts";
import type { Manifest } from "../manifest/types.ts";
import type { Engine, Status } from "./engine.ts";
import type { FileChange } from "./ops.ts";
import type { DeployOptions } from "./run.ts";
import { displayIn } from "./state.ts";

export interface HostReport {
  host: HostId;
  title: string;
  items: { file: string; what: string; status: Status }[];
  unsupported: string[];
  notes: string[];
  warnings: string[];
  reconnect: string;
}

export interface DeployReport {
  command: "deploy" | "convert";
  action: "deploy" | "remove";
  dryRun: boolean;
  adapter: string;
  scope: Scope;
  /** The project (deploy) or home directory (convert). */
  root: string;
  /** The record of what hermit wrote here (deleted when nothing is left on it). */
  record: string;
  /** True when this run removed the record: nothing hermit wrote is left here. */
  recordRemoved?: boolean;
  /** Where this run's backups of the files it changed are (none when it changed no existing file). */
  backups?: string;
  hosts: HostReport[];
  /** For `--host all`: what showed each host in use (a file or folder). */
  detected?: { host: HostId; sign: string }[];
  changed: { file: string; change: "created" | "updated" | "deleted" }[];
  warnings: string[];
  /** `serve.instructions` of a standalone adapter. */
  instructions?: string;
  /** The variable a remote entry reads its bearer token from. */
  tokenVar?: string;
  diff?: string;
}

interface Inputs {
  o: DeployOptions;
  adapter: string;
  /** None for a removal by the name on record (its directory is gone). */
  manifest?: Manifest;
  hosts: HostId[];
  detected?: Detected[];
  plans: HostPlan[];
  engine: Engine;
  changes: FileChange[];
  root: string;
  recordFile: string;
  show: (file: string) => string;
  backups?: string;
  /** Whether the record file exists after the run (it is gone once nothing is on it). */
  recordExists: boolean;
}

export function buildReport(x: Inputs): DeployReport {
  const { o, manifest: m } = x;
  const hosts = x.hosts.map((h): HostReport => {
    const plan = x.plans.find((p) => p.host === h);
    const owner = `${x.adapter}/${h}`;
    const long = o.remove || !m
      ? []
      : m.exports.tools.map((t) => nameBudgetWarning(hostToolName(m.name, t), [h]));
    return {
      host: h,
      title: HOSTS[h].title,
      items: x.engine.outcomes
        .filter((r) => r.owners.includes(owner))
        .map((r) => ({ file: r.file, what: r.what, status: r.status }))
        .sort((a, b) => order(plan, a.file) - order(plan, b.file)),
      unsupported: plan?.unsupported ?? [],
      notes: plan?.notes ?? [],
      warnings: long.filter((w) => w !== undefined),
      reconnect: plan?.reconnect ?? "",
    };
  });
  const report: DeployReport = {
    command: o.scope === "project" ? "deploy" : "convert",
    action: o.remove ? "remove" : "deploy",
    dryRun: o.dryRun,
    adapter: x.adapter,
    scope: o.scope,
    root: x.root,
    record: x.recordFile,
    ...(!o.dryRun && !x.recordExists ? { recordRemoved: true } : {}),
    ...(x.backups ? { backups: x.backups } : {}),
    hosts,
    ...(x.detected ? { detected: x.detected } : {}),
    changed: x.changes.map((c) => ({
      file: c.file,
      change: c.before === undefined ? "created" : c.after === undefined ? "deleted" : "updated",
    })),
    warnings: x.engine.warnings,
  };
  if (!o.remove && m?.serve.lifecycle === "standalone" && m.serve.instructions) {
    report.instructions = path.resolve(m.dir, m.serve.instructions);
  }
  if (o.serveUrl && !o.remove) report.tokenVar = TOKEN_VAR;
  if (o.dryRun) report.diff = x.changes.map((c) => unifiedDiff(c, x.show)).join("");
  return report;
}

/**
 * One item as a sentence: what happened to it and to its file, e.g. "created .mcp.json with MCP
 * server notes" (the file is new), "added MCP server notes to .mcp.json" (the file was there),
 * "removed MCP server notes and .mcp.json" (hermit had created the file), "put back your MCP server
 * notes in .mcp.json" (what `--force` had replaced); "would …" in a dry run.
 */
export function itemLine(
  i: { what: string; status: Status },
  file: string,
  change: "created" | "updated" | "deleted" | undefined,
  dryRun: boolean,
): string {
  const v = (done: string, would: string) => dryRun ? `would ${would}` : done;
  switch (i.status) {
    case "created":
      return change === "created"
        ? `${v("created", "create")} ${file} with ${i.what}`
        : `${v("added", "add")} ${i.what} to ${file}`;
    case "updated":
      return `${v("updated", "update")} ${i.what} in ${file}`;
    case "replaced":
      return `${v("replaced", "replace")} ${i.what} in ${file} (--force)`;
    case "removed":
      return change === "deleted"
        ? `${v("removed", "remove")} ${i.what} and ${file} (hermit had created it)`
        : `${v("removed", "remove")} ${i.what} from ${file}`;
    case "restored":
      return `${v("put", "put")} back your ${i.what} in ${file}`;
    case "absent":
      return change === "deleted"
        ? `${i.what}: no longer in ${file}; ${v("removed", "remove")} the file (hermit had created it)`
        : `${i.what}: no longer in ${file} (nothing to remove)`;
    case "kept":
      return `${v("left", "leave")} ${i.what} in ${file} (changed since hermit wrote it)`;
    case "unchanged":
      return `unchanged: ${i.what} in ${file}`;
  }
}

/** Items in the order the host's plan lists them (removed ones last). */
function order(plan: HostPlan | undefined, file: string): number {
  const i = plan?.items.findIndex((it) => it.file === file) ?? -1;
  return i < 0 ? Number.MAX_SAFE_INTEGER : i;
}

const fatal = new TextDecoder("utf-8", { fatal: true });

function unifiedDiff(c: FileChange, show: (f: string) => string): string {
  const text = (b?: Uint8Array) => {
    if (b === undefined) return "";
    try {
      return fatal.decode(b);
    } catch {
      return undefined;
    }
  };
  const a = text(c.before);
  const b = text(c.after);
  const name = show(c.file);
  if (a === undefined || b === undefined) {
    return `Binary file ${name} ${c.after ? "changes" : "is deleted"}\n`;
  }
  return createTwoFilesPatch(
    c.before === undefined ? "/dev/null" : `a/${name}`,
    c.after === undefined ? "/dev/null" : `b/${name}`,
    a,
    b,
    undefined,
    undefined,
    { context: 3 },
  ).replace(/^=+\n/, "");
}

export function renderReport(r: DeployReport): string {
  const show = (file: string) => displayIn(r.root, file, r.scope);
  const out: string[] = [];
  const doing = r.action === "remove" ? "removing" : r.command === "deploy" ? "deploying" : "converting";
  const where = r.scope === "project" ? r.root : "the user's configuration";
  out.push(
    `${r.dryRun ? "dry run: " : ""}${doing} ${r.adapter} ${r.action === "remove" ? "from" : "into"} ${
      r.hosts.map((h) => h.host).join(", ") || "no host"
    } (${where})`,
  );
  if (r.detected) {
    out.push(
      `--host all: ${
        r.scope === "project" ? "the hosts with files here" : "the hosts set up for this user"
      }: ${r.detected.map((d) => `${d.host} (${show(d.sign)})`).join(", ")}`,
    );
  }
  const fileChange = new Map(r.changed.map((c) => [c.file, c.change]));
  for (const h of r.hosts) {
    out.push(`${h.host} (${h.title})`);
    for (const i of h.items) out.push(`  ${itemLine(i, show(i.file), fileChange.get(i.file), r.dryRun)}`);
    if (h.items.length === 0) out.push("  nothing on record");
    for (const u of h.unsupported) out.push(`  not supported: ${u}`);
    for (const w of h.warnings) out.push(`  warning: ${w}`);
    for (const n of h.notes) out.push(`  note: ${n}`);
    if (r.action === "deploy" && h.reconnect) out.push(`  reconnect: ${h.reconnect}`);
  }
  for (const w of r.warnings) out.push(`warning: ${w}`);
  if (r.instructions) out.push(`standalone service: see ${r.instructions} (how to run it by hand)`);
  if (r.tokenVar) out.push(`the bearer token comes from ${r.tokenVar} at run time; no token is written`);
  if (r.dryRun) {
    out.push(r.changed.length ? "nothing written (--dry-run); the changes:" : "nothing to change");
  } else {
    const n = r.changed.length;
    out.push(
      n === 0
        ? "nothing changed"
        : `${n} file${n === 1 ? "" : "s"} changed; ${
          r.recordRemoved
            ? `nothing hermit wrote is left ${
              r.scope === "project" ? "here" : "in the user's configuration"
            }, so its record (${r.record}) is gone too`
            : `record in ${r.record}`
        }`,
    );
    if (r.backups) out.push(`backups of the files as they were: ${r.backups}`);
  }
  let text = out.join("\n") + "\n";
  if (r.dryRun && r.diff) text += r.diff;
  return text;
}
