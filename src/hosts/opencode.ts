/**
 * OpenCode. Project: `opencode.json[c]` (or `.opencode/opencode.json[c]`), AGENTS.md,
 * `.agents/skills`, `.opencode/agents/*.md` (`mode: subagent`); user: the same under
 * `$XDG_CONFIG_HOME/opencode`. Two config shapes: V1 `mcp.<name>` with `enabled`, V2
 * `mcp.servers.<name>`; hermit writes V2 into a file that already uses it, else V1 (which every
 * version reads). The command is one array; `{env:VAR}` is its variable syntax.
 */
import { type JsonObject, readJson } from "./edit/json.ts";
import {
  bearer,
  contextItems,
  frontMatterFile,
  roleItems,
  serverEntry,
  skillItems,
  tokenNotes,
} from "./parts.ts";
import { configHome, inProject, join } from "./paths.ts";
import type { AdapterParts, HostFs, HostPlan, HostSpec, Target } from "./types.ts";

function configDir(t: Target): string {
  return join(t, configHome(t), "opencode");
}

/** The config file in use: the first that exists, else `opencode.json`. */
function configFile(t: Target, fs: HostFs): string {
  const candidates = t.scope === "project"
    ? [
      "opencode.jsonc",
      "opencode.json",
      join(t, ".opencode", "opencode.jsonc"),
      join(t, ".opencode", "opencode.json"),
    ]
      .map((f) => inProject(t, f))
    : ["opencode.jsonc", "opencode.json"].map((f) => join(t, configDir(t), f));
  return candidates.find(fs.exists) ?? candidates[1];
}

/** V2 when the file already keeps its servers under `mcp.servers`. */
function usesV2(text: string | undefined): boolean {
  if (text === undefined) return false;
  try {
    const found = readJson(text, ["mcp", "servers"]);
    const v = found.found ? found.value : undefined;
    return v !== null && typeof v === "object" && !Array.isArray(v) && !("type" in v) && !("command" in v);
  } catch {
    return false;
  }
}

export const opencode: HostSpec = {
  id: "opencode",
  title: "OpenCode",
  nameBudget: 64,
  expands: /\{(?:env|file):[^}]*\}/, // {env:VAR}, {file:path}
  signs: { project: ["opencode.json", "opencode.jsonc", ".opencode"], user: (t) => [configDir(t)] },
  plan(a: AdapterParts, t: Target, fs: HostFs): HostPlan {
    const project = t.scope === "project";
    const file = configFile(t, fs);
    const v2 = usesV2(fs.read(file));
    const l = a.launch;
    const value: JsonObject = l.kind === "stdio"
      ? { type: "local", command: [l.command, ...l.args], ...(v2 ? {} : { enabled: true }) }
      : {
        type: "remote",
        url: l.url,
        headers: bearer((n) => `{env:${n}}`, l.tokenVar),
        ...(v2 ? {} : { enabled: true }),
      };
    const unsupported: string[] = [];
    return {
      host: "opencode",
      items: [
        serverEntry(a, file, "json", v2 ? ["mcp", "servers"] : ["mcp"], value),
        ...contextItems(a, project ? inProject(t, "AGENTS.md") : join(t, configDir(t), "AGENTS.md")),
        ...skillItems(a, t, project ? inProject(t, ".agents", "skills") : join(t, configDir(t), "skills")),
        ...roleItems(
          a,
          (n) =>
            project
              ? inProject(t, ".opencode", "agents", `${n}.md`)
              : join(t, configDir(t), "agents", `${n}.md`),
          (role) => frontMatterFile({ description: role.description, mode: "subagent" }, role.body),
          unsupported,
        ),
      ],
      unsupported,
      notes: tokenNotes(l, "OpenCode"),
      reconnect: "restart OpenCode (it reads its config at start; /mcps shows the server)",
    };
  },
};
