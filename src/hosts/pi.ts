/**
 * Pi coding agent (1.x, built-in MCP). Project: `.pi/mcp.json` (read only in trusted projects),
 * AGENTS.md, `.agents/skills`; user: `$PI_CODING_AGENT_DIR` (default `~/.pi/agent`) `mcp.json`,
 * `AGENTS.md`, `skills/`. `mcpServers` shape; `${VAR}` in headers. Pi has no subagents.
 */
import type { JsonObject } from "./edit/json.ts";
import { bearer, contextItems, noRoles, serverEntry, skillItems } from "./parts.ts";
import { envDir, inHome, inProject, join } from "./paths.ts";
import type { AdapterParts, HostPlan, HostSpec, Target } from "./types.ts";

export function piDir(t: Target): string {
  return envDir(t, "PI_CODING_AGENT_DIR", inHome(t, ".pi", "agent"));
}

export const pi: HostSpec = {
  id: "pi",
  title: "Pi",
  nameBudget: 64,
  signs: { project: [".pi"], user: (t) => [piDir(t)] },
  plan(a: AdapterParts, t: Target): HostPlan {
    const project = t.scope === "project";
    const dir = piDir(t);
    const l = a.launch;
    const value: JsonObject = l.kind === "stdio"
      ? { command: l.command, args: l.args }
      : { url: l.url, headers: bearer((n) => `\${${n}}`, l.tokenVar) };
    return {
      host: "pi",
      items: [
        serverEntry(
          a,
          project ? inProject(t, ".pi", "mcp.json") : join(t, dir, "mcp.json"),
          "json",
          ["mcpServers"],
          value,
        ),
        ...contextItems(a, project ? inProject(t, "AGENTS.md") : join(t, dir, "AGENTS.md")),
        ...skillItems(a, t, project ? inProject(t, ".agents", "skills") : join(t, dir, "skills")),
      ],
      unsupported: noRoles(a, "Pi has no subagents"),
      notes: project
        ? ["Pi reads .pi/mcp.json only in a trusted project (pi asks, or run it once with --approve)"]
        : [],
      reconnect: `in Pi: /mcp reconnect ${a.name} (or /reload)`,
    };
  },
};
