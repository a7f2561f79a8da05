/**
 * Hermes Agent. MCP servers live only in the user's `$HERMES_HOME/config.yaml` (`mcp_servers:`,
 * default `~/.hermes`, `%LOCALAPPDATA%\hermes` on Windows), a file shared with the model and
 * terminal settings, edited in place. Context in AGENTS.md, skills under `$HERMES_HOME/skills`,
 * roles as named agents (`agents/*.md`, `schema_version: 1`). A project gets context and roles;
 * its MCP entry and skills need `convert`.
 */
import type { JsonObject } from "./edit/json.ts";
import {
  bearer,
  contextItems,
  frontMatterFile,
  noSkills,
  roleItems,
  serverEntry,
  skillItems,
} from "./parts.ts";
import { envDir, inHome, inProject, join, localAppData } from "./paths.ts";
import type { AdapterParts, HostPlan, HostSpec, Item, Target } from "./types.ts";

export function hermesHome(t: Target): string {
  return envDir(
    t,
    "HERMES_HOME",
    t.platform === "win32" ? join(t, localAppData(t), "hermes") : inHome(t, ".hermes"),
  );
}

export const hermes: HostSpec = {
  id: "hermes",
  title: "Hermes Agent",
  nameBudget: 64,
  expands: /\$\{[^}]*\}/, // ${VAR}, ${env:VAR}
  signs: { project: [".hermes", ".hermes.md", "HERMES.md"], user: (t) => [hermesHome(t)] },
  plan(a: AdapterParts, t: Target): HostPlan {
    const project = t.scope === "project";
    const home = hermesHome(t);
    const l = a.launch;
    const unsupported: string[] = [];
    const items: Item[] = [];
    if (project) {
      unsupported.push(
        `MCP server: Hermes reads MCP servers only from ${
          join(t, home, "config.yaml")
        }; run hermit convert ${a.dir} --host hermes`,
      );
      unsupported.push(
        ...noSkills(a, "Hermes has no project skills folder; hermit convert puts them in its skills folder"),
      );
    } else {
      const value: JsonObject = l.kind === "stdio"
        ? { command: l.command, args: l.args }
        : { url: l.url, headers: bearer((n) => `\${${n}}`, l.tokenVar) };
      items.push(serverEntry(a, join(t, home, "config.yaml"), "yaml", ["mcp_servers"], value));
      items.push(...skillItems(a, t, join(t, home, "skills")));
    }
    items.push(...contextItems(a, project ? inProject(t, "AGENTS.md") : join(t, home, "AGENTS.md")));
    items.push(...roleItems(
      a,
      (n) => project ? inProject(t, ".hermes", "agents", `${n}.md`) : join(t, home, "agents", `${n}.md`),
      (role) =>
        frontMatterFile({ schema_version: 1, name: role.name, description: role.description }, role.body),
      unsupported,
    ));
    return {
      host: "hermes",
      items,
      unsupported,
      notes: l.kind === "remote" && !project
        ? [`set ${l.tokenVar} in ${join(t, home, ".env")} or the environment Hermes starts in`]
        : [],
      // a project gets no MCP server (convert writes it): the context is what changed there
      reconnect: project
        ? "in Hermes: start a new session (AGENTS.md is read when one starts)"
        : "in Hermes: /reload-mcp",
    };
  },
};
