/**
 * Gemini CLI. Project: `.gemini/settings.json` (read only in trusted folders), GEMINI.md (or the
 * first `context.fileName` the settings name), `.agents/skills`, `.gemini/agents`; user:
 * `~/.gemini/…`. In an untrusted folder no MCP server starts, the user's neither. `${VAR}` is its
 * variable syntax; MCP tools are named `mcp_<server>_<tool>`.
 */
import { type JsonObject, readJson } from "./edit/json.ts";
import {
  bearer,
  contextItems,
  frontMatterFile,
  roleItems,
  roleTools,
  serverEntry,
  skillItems,
  tokenNotes,
} from "./parts.ts";
import { inHome, inProject, join } from "./paths.ts";
import type { AdapterParts, HostFs, HostPlan, HostSpec, Target } from "./types.ts";

/** A file name of its own (not `.`, `..` or a path): the context file hermit may write. */
const isName = (x: unknown): x is string =>
  typeof x === "string" && /^[^/\\]+$/.test(x) && x !== "." && x !== "..";

/** The first name in `context.fileName` from the settings (a name or a list), else GEMINI.md. */
function contextFileName(settings: (string | undefined)[]): string {
  for (const text of settings) {
    if (text === undefined) continue;
    try {
      const found = readJson(text, ["context", "fileName"]);
      const v = found.found ? found.value : undefined;
      const name = (Array.isArray(v) ? v : [v]).find(isName);
      if (name !== undefined) return name;
    } catch { /* unreadable settings: the default */ }
  }
  return "GEMINI.md";
}

export const gemini: HostSpec = {
  id: "gemini",
  title: "Gemini CLI",
  nameBudget: 64,
  expands: /\$(?:\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*)/, // $VAR, ${VAR}, ${VAR:-default}
  signs: { project: [".gemini", "GEMINI.md"], user: (t) => [inHome(t, ".gemini")] },
  plan(a: AdapterParts, t: Target, fs: HostFs): HostPlan {
    const project = t.scope === "project";
    const dir = project ? inProject(t, ".gemini") : inHome(t, ".gemini");
    const settings = join(t, dir, "settings.json");
    const l = a.launch;
    const value: JsonObject = l.kind === "stdio"
      ? { command: l.command, args: l.args }
      : { type: "http", url: l.url, headers: bearer((n) => `\${${n}}`, l.tokenVar) };
    const name = contextFileName([
      fs.read(settings),
      ...(project ? [fs.read(inHome(t, ".gemini", "settings.json"))] : []),
    ]);
    const unsupported: string[] = [];
    const notes = [
      project
        ? "Gemini CLI reads .gemini/settings.json only in a trusted folder"
        : "Gemini CLI starts MCP servers, the user's too, only in a trusted folder",
      ...tokenNotes(l, "Gemini CLI"),
    ];
    return {
      host: "gemini",
      items: [
        serverEntry(a, settings, "json", ["mcpServers"], value),
        ...contextItems(a, project ? inProject(t, name) : join(t, dir, name)),
        ...skillItems(a, t, project ? inProject(t, ".agents", "skills") : join(t, dir, "skills")),
        ...roleItems(a, (n) => join(t, dir, "agents", `${n}.md`), (role) => {
          const tools = roleTools(role, a, (tool) => `mcp_${a.name}_${tool}`);
          return frontMatterFile({ name: role.name, description: role.description, tools }, role.body);
        }, unsupported),
      ],
      unsupported,
      notes,
      reconnect: "in Gemini CLI: /mcp reload",
    };
  },
};
