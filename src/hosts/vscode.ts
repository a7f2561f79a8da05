/**
 * VS Code (GitHub Copilot agent mode). Project: `.vscode/mcp.json` (`servers`, `type` required),
 * `.github/copilot-instructions.md`, `.github/skills`, `.github/agents/*.agent.md`; user: the
 * profile's `mcp.json` (`~/.config/Code/User`, `~/Library/Application Support/Code/User`,
 * `%APPDATA%\Code\User`), `~/.copilot/skills` and `~/.copilot/agents`. `${env:VAR}` is its
 * variable syntax; tools are named `<server>/<tool>`.
 */
import type { JsonObject } from "./edit/json.ts";
import {
  bearer,
  contextItems,
  frontMatterFile,
  noContext,
  roleItems,
  roleTools,
  serverEntry,
  skillItems,
  tokenNotes,
} from "./parts.ts";
import { appData, configHome, inHome, inProject, join } from "./paths.ts";
import type { AdapterParts, HostPlan, HostSpec, Target } from "./types.ts";

export function vscodeUserDir(t: Target): string {
  if (t.platform === "win32") return join(t, appData(t), "Code", "User");
  if (t.platform === "darwin") return inHome(t, "Library", "Application Support", "Code", "User");
  return join(t, configHome(t), "Code", "User");
}

export const vscode: HostSpec = {
  id: "vscode",
  title: "VS Code",
  nameBudget: 64,
  expands: /\$\{[^}]*\}/, // ${env:VAR}, ${input:id}, ${workspaceFolder}, …
  signs: { project: [".vscode", ".github/copilot-instructions.md"], user: (t) => [vscodeUserDir(t)] },
  plan(a: AdapterParts, t: Target): HostPlan {
    const project = t.scope === "project";
    const l = a.launch;
    const value: JsonObject = l.kind === "stdio"
      ? { type: "stdio", command: l.command, args: l.args }
      : { type: "http", url: l.url, headers: bearer((n) => `\${env:${n}}`, l.tokenVar) };
    const unsupported = project ? [] : noContext(
      a,
      "VS Code keeps user instructions in its settings, not in a file; deploy into a project instead",
    );
    const agents = project ? inProject(t, ".github", "agents") : inHome(t, ".copilot", "agents");
    const notes = [
      ...(project ? ["VS Code starts a workspace's MCP servers only in a trusted workspace"] : []),
      ...tokenNotes(l, "VS Code"),
    ];
    return {
      host: "vscode",
      items: [
        serverEntry(
          a,
          project ? inProject(t, ".vscode", "mcp.json") : join(t, vscodeUserDir(t), "mcp.json"),
          "json",
          ["servers"],
          value,
        ),
        ...(project ? contextItems(a, inProject(t, ".github", "copilot-instructions.md")) : []),
        ...skillItems(a, t, project ? inProject(t, ".github", "skills") : inHome(t, ".copilot", "skills")),
        ...roleItems(a, (n) => join(t, agents, `${n}.agent.md`), (role) => {
          const tools = roleTools(role, a, (tool) => `${a.name}/${tool}`);
          return frontMatterFile({ name: role.name, description: role.description, tools }, role.body);
        }, unsupported),
      ],
      unsupported,
      notes,
      reconnect: `in VS Code: Command Palette → MCP: List Servers → ${a.name} → Restart`,
    };
  },
};
