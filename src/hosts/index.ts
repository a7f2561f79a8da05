/**
 * The hosts hermit deploys into, by id, and `--host` parsing: names, comma lists, `all` (the
 * hosts in use here: `detectHosts`); and the tool-name budgets they impose (for `check`,
 * `deploy` and `init`).
 */
import { usageError } from "../errors.ts";
import { suggest } from "../manifest/names.ts";
import { claude } from "./claude.ts";
import { codex } from "./codex.ts";
import { cursor } from "./cursor.ts";
import { gemini } from "./gemini.ts";
import { hermes } from "./hermes.ts";
import { opencode } from "./opencode.ts";
import { pi } from "./pi.ts";
import { inProject } from "./paths.ts";
import { HOST_IDS, type HostFs, type HostId, type HostSpec, type Target } from "./types.ts";
import { vscode } from "./vscode.ts";

export const HOSTS: Record<HostId, HostSpec> = {
  claude,
  codex,
  hermes,
  pi,
  opencode,
  cursor,
  gemini,
  vscode,
};

/** `--host` values (repeated, comma-separated) → host ids, or "all". */
export function parseHosts(values: readonly string[]): HostId[] | "all" {
  const names = values.flatMap((v) => v.split(",")).map((s) => s.trim().toLowerCase()).filter(Boolean);
  if (names.includes("all")) return "all";
  const out: HostId[] = [];
  for (const n of names) {
    const id = n === "claude-code" ? "claude" : n === "code" || n === "copilot" ? "vscode" : n;
    if (!(HOST_IDS as readonly string[]).includes(id)) {
      const hint = suggest(n, [...HOST_IDS, "all"]);
      throw usageError(
        `unknown host '${n}'${hint ? ` (did you mean ${hint}?)` : ""}; hosts: ${HOST_IDS.join(", ")}, all` +
          (n.includes("/") || n.includes("\\") || n === "."
            ? " (the PROJECT directory goes before --host)"
            : ""),
      );
    }
    if (!out.includes(id as HostId)) out.push(id as HostId);
  }
  if (out.length === 0) throw usageError(`--host needs a host: ${HOST_IDS.join(", ")}, or all`);
  return out;
}

/** A host `--host all` takes, with the first of its signs found (a path). */
export interface Detected {
  host: HostId;
  sign: string;
}

/**
 * The hosts in use at this target, for `--host all`: in a project, those whose own files are in it
 * (a host configured only for the user has nothing of the project's to go by, and `convert` is
 * what writes its user configuration); for convert, those whose user configuration exists.
 */
export function detectHosts(t: Target, fs: HostFs): Detected[] {
  const out: Detected[] = [];
  for (const id of HOST_IDS) {
    const signs = HOSTS[id].signs;
    const paths = t.scope === "project"
      ? signs.project.map((s) => inProject(t, ...s.split("/")))
      : signs.user(t);
    const sign = paths.find((p) => fs.exists(p));
    if (sign !== undefined) out.push({ host: id, sign });
  }
  return out;
}

/** The shortest tool-name cap among the hosts: a name within it fits every host. */
export function strictestNameBudget(): number {
  return Math.min(...HOST_IDS.map((id) => HOSTS[id].nameBudget));
}

/**
 * The warning for a host tool name (`mcp__<adapter>__<tool>`) longer than some of `hosts` accept,
 * naming those with the largest cap it passes; undefined when it fits them all.
 */
export function nameBudgetWarning(full: string, hosts: readonly HostId[] = HOST_IDS): string | undefined {
  const over = hosts.filter((id) => full.length > HOSTS[id].nameBudget);
  if (over.length === 0) return undefined;
  const budget = Math.max(...over.map((id) => HOSTS[id].nameBudget));
  const titles = over.filter((id) => HOSTS[id].nameBudget === budget).map((id) => HOSTS[id].title);
  const who = titles.length > 2
    ? `${titles[0]}, ${titles[1]} and others cap`
    : titles.length === 2
    ? `${titles.join(" and ")} cap`
    : `${titles[0]} caps`;
  return `${full} is ${full.length} characters; ${who} tool names at ${budget}: shorten the adapter or tool name`;
}
