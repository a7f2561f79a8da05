/**
 * The hosts hermit deploys into, by id, and `--host` parsing: names, comma lists, `all` (the
 * hosts whose configuration exists here).
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

/** The hosts whose configuration exists for this target. */
export function detectHosts(t: Target, fs: HostFs): HostId[] {
  return HOST_IDS.filter((id) => HOSTS[id].detect(t, fs));
}
