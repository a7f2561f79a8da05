/**
 * OpenAI Codex. Project: `.codex/config.toml` (read only in trusted projects), AGENTS.md,
 * `.agents/skills`, `.codex/agents/*.toml`; user: `$CODEX_HOME/config.toml` (default `~/.codex`),
 * `$CODEX_HOME/AGENTS.md`, `~/.agents/skills`, `$CODEX_HOME/agents`. Codex expands no variables:
 * the token goes by name in `bearer_token_env_var`. `startup_timeout_sec` leaves room for a
 * standalone service to start. Trust is the user's call: deploy says when it is missing.
 */
import type { JsonObject } from "./edit/json.ts";
import { readToml, renderTomlDoc } from "./edit/toml.ts";
import { bytes, contextItems, roleItems, serverEntry, skillItems, tokenNotes } from "./parts.ts";
import { envDir, inHome, inProject, join } from "./paths.ts";
import type { AdapterParts, HostFs, HostPlan, HostSpec, Target } from "./types.ts";

export const STARTUP_TIMEOUT_SEC = 30;

export function codexHome(t: Target): string {
  return envDir(t, "CODEX_HOME", inHome(t, ".codex"));
}

function trusted(t: Target, fs: HostFs): boolean {
  const text = fs.read(join(t, codexHome(t), "config.toml"));
  if (text === undefined || !t.project) return false;
  try {
    const found = readToml(text, ["projects", t.project, "trust_level"]);
    return found.found && found.value === "trusted";
  } catch {
    return false;
  }
}

export const codex: HostSpec = {
  id: "codex",
  title: "Codex",
  nameBudget: 64,
  signs: { project: [".codex"], user: (t) => [codexHome(t)] },
  plan(a: AdapterParts, t: Target, fs: HostFs): HostPlan {
    const project = t.scope === "project";
    const home = codexHome(t);
    const l = a.launch;
    const value: JsonObject = l.kind === "stdio"
      ? { command: l.command, args: l.args, startup_timeout_sec: STARTUP_TIMEOUT_SEC }
      : { url: l.url, bearer_token_env_var: l.tokenVar, startup_timeout_sec: STARTUP_TIMEOUT_SEC };
    const unsupported: string[] = [];
    const notes: string[] = [];
    if (project && !trusted(t, fs)) {
      notes.push(
        `Codex reads .codex/config.toml only in trusted projects: trust this one when Codex asks, or add [projects.${
          JSON.stringify(t.project)
        }] trust_level = "trusted" to ${join(t, home, "config.toml")}`,
      );
    }
    notes.push(...tokenNotes(l, "Codex"));
    return {
      host: "codex",
      items: [
        serverEntry(
          a,
          project ? inProject(t, ".codex", "config.toml") : join(t, home, "config.toml"),
          "toml",
          ["mcp_servers"],
          value,
        ),
        ...contextItems(a, project ? inProject(t, "AGENTS.md") : join(t, home, "AGENTS.md")),
        ...skillItems(a, t, project ? inProject(t, ".agents", "skills") : inHome(t, ".agents", "skills")),
        ...roleItems(
          a,
          (n) =>
            project ? inProject(t, ".codex", "agents", `${n}.toml`) : join(t, home, "agents", `${n}.toml`),
          (role) => {
            return bytes(renderTomlDoc({
              name: role.name,
              description: role.description ?? role.name,
              developer_instructions: role.body.replace(/^\s*\n/, ""),
            }));
          },
          unsupported,
        ),
      ],
      unsupported,
      notes,
      reconnect: "start a new Codex session (codex resume keeps the conversation); /mcp shows the server",
    };
  },
};
