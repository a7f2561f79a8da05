/**
 * Cursor. Project: `.cursor/mcp.json`, the context as an always-applied rule
 * `.cursor/rules/<adapter>.mdc`, `.cursor/skills`, `.cursor/agents`; user: `~/.cursor/…` (user
 * rules live in Cursor's settings, not in a file). `${env:VAR}` is its variable syntax; tool names
 * are capped at 60 characters.
 */
import type { JsonObject } from "./edit/json.ts";
import {
  bearer,
  bytes,
  frontMatterFile,
  noContext,
  roleItems,
  serverEntry,
  skillItems,
  tokenNotes,
} from "./parts.ts";
import { inHome, inProject, join } from "./paths.ts";
import type { AdapterParts, HostPlan, HostSpec, Item, Target } from "./types.ts";

export const cursor: HostSpec = {
  id: "cursor",
  title: "Cursor",
  nameBudget: 60,
  expands: /\$\{[^}]*\}/, // ${env:VAR}, ${workspaceFolder}, …
  signs: { project: [".cursor", ".cursorrules"], user: (t) => [inHome(t, ".cursor")] },
  plan(a: AdapterParts, t: Target): HostPlan {
    const project = t.scope === "project";
    const dir = project ? inProject(t, ".cursor") : inHome(t, ".cursor");
    const l = a.launch;
    const value: JsonObject = l.kind === "stdio"
      ? { command: l.command, args: l.args }
      : { url: l.url, headers: bearer((n) => `\${env:${n}}`, l.tokenVar) };
    const unsupported: string[] = [];
    const items: Item[] = [serverEntry(a, join(t, dir, "mcp.json"), "json", ["mcpServers"], value)];
    if (project && a.context !== undefined) {
      const head = `---\ndescription: ${a.name} (from hermit deploy)\nalwaysApply: true\n---\n\n`;
      items.push({
        kind: "file",
        file: join(t, dir, "rules", `${a.name}.mdc`),
        content: bytes(head + a.context.replace(/\s+$/, "") + "\n"),
        what: "context (rule)",
      });
    } else if (!project) {
      unsupported.push(
        ...noContext(
          a,
          "Cursor keeps user rules in its settings, not in a file; deploy into a project instead",
        ),
      );
    }
    items.push(...skillItems(a, t, join(t, dir, "skills")));
    items.push(...roleItems(
      a,
      (n) => join(t, dir, "agents", `${n}.md`),
      (role) =>
        frontMatterFile({
          name: role.name,
          description: role.description,
          model: typeof role.fields.model === "string" ? role.fields.model : undefined,
        }, role.body),
      unsupported,
    ));
    return {
      host: "cursor",
      items,
      unsupported,
      notes: tokenNotes(l, "Cursor"),
      reconnect: `in Cursor: Settings → Tools & MCP, turn ${a.name} off and on`,
    };
  },
};
