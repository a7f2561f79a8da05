/**
 * Claude Code. Project: `.mcp.json`, CLAUDE.md, `.claude/skills`, `.claude/agents`; user:
 * `~/.claude.json` (top-level `mcpServers`), `~/.claude/…` (or `$CLAUDE_CONFIG_DIR`). Claude Code
 * ignores `cwd`, so the adapter path is an argument; `${VAR}` is its variable syntax. It reads
 * AGENTS.md only when there is no CLAUDE.md: creating CLAUDE.md next to an AGENTS.md adds an
 * `@AGENTS.md` import so that file keeps being read.
 */
import type { JsonObject } from "./edit/json.ts";
import { outsideBlocks, readBlock } from "./edit/markdown.ts";
import {
  bearer,
  contextItems,
  frontMatterFile,
  roleItems,
  roleTools,
  serverEntry,
  skillItems,
} from "./parts.ts";
import { envDir, inHome, inProject, join } from "./paths.ts";
import type { AdapterParts, HostFs, HostPlan, HostSpec, Item, Target } from "./types.ts";

export const AGENTS_IMPORT = "import-agents-md";

function configDir(t: Target): string {
  return envDir(t, "CLAUDE_CONFIG_DIR", inHome(t, ".claude"));
}

function claudeJson(t: Target): string {
  return t.env.CLAUDE_CONFIG_DIR ? join(t, configDir(t), ".claude.json") : inHome(t, ".claude.json");
}

export const claude: HostSpec = {
  id: "claude",
  title: "Claude Code",
  nameBudget: 64,
  expands: /\$\{[^}]*\}/, // ${VAR}, ${VAR:-default}
  signs: {
    project: [".mcp.json", ".claude", "CLAUDE.md", "CLAUDE.local.md"],
    user: (t) => [claudeJson(t), configDir(t)],
  },
  plan(a: AdapterParts, t: Target, fs: HostFs): HostPlan {
    const project = t.scope === "project";
    const dir = project ? inProject(t, ".claude") : configDir(t);
    const l = a.launch;
    const value: JsonObject = l.kind === "stdio"
      ? { type: "stdio", command: l.command, args: l.args }
      : { type: "http", url: l.url, headers: bearer((n) => `\${${n}}`, l.tokenVar) };
    const unsupported: string[] = [];
    const instructions = project ? inProject(t, "CLAUDE.md") : join(t, dir, "CLAUDE.md");
    const items: Item[] = [
      serverEntry(a, project ? inProject(t, ".mcp.json") : claudeJson(t), "json", ["mcpServers"], value),
      ...contextItems(a, instructions),
      ...skillItems(a, t, join(t, dir, "skills")),
      ...roleItems(a, (n) => join(t, dir, "agents", `${n}.md`), (role) => {
        const tools = roleTools(role, a, (tool) => `mcp__${a.name}__${tool}`);
        return frontMatterFile({
          ...role.fields,
          name: role.name,
          description: role.description,
          tools: tools?.join(", "),
        }, role.body);
      }, unsupported),
    ];
    // the user's own AGENTS.md keeps reaching Claude Code once there is a CLAUDE.md; one holding
    // only hermit's blocks (written for another host) would be the same context twice
    // (a CLAUDE.md that is a link to AGENTS.md reads it already)
    const agentsFile = project ? inProject(t, "AGENTS.md") : undefined;
    const agents = agentsFile && !fs.same?.(instructions, agentsFile) ? fs.read(agentsFile) : undefined;
    if (project && a.context !== undefined && agents !== undefined && outsideBlocks(agents).trim() !== "") {
      const current = fs.read(instructions);
      if (current === undefined || readBlock(current, AGENTS_IMPORT, instructions) !== undefined) {
        items.push({
          kind: "block",
          file: instructions,
          id: AGENTS_IMPORT,
          text: "@AGENTS.md",
          what: "AGENTS.md import (Claude Code reads AGENTS.md only without a CLAUDE.md)",
        });
      }
    }
    return {
      host: "claude",
      items,
      unsupported,
      notes: project && l.kind === "stdio"
        ? [
          "Claude Code asks once before it starts a project's MCP servers (or set enableAllProjectMcpServers in ~/.claude/settings.json)",
        ]
        : l.kind === "remote"
        ? [
          `set ${l.tokenVar} in the environment Claude Code starts in; Claude Code expands \${${l.tokenVar}}`,
        ]
        : [],
      reconnect: `in Claude Code: /mcp → ${a.name} → Reconnect (or start a new session)`,
    };
  },
};
