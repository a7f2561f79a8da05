/**
 * What several hosts share when turning adapter parts into items: the context block, skill
 * directories copied file by file, the MCP server entry, role files with converted front matter (tool names mapped to the
 * host's own), and the bearer header written as a variable reference in the host's syntax.
 */
import { stringify } from "yaml";
import type { FrontMatterDoc } from "../adapter/content.ts";
import type { JsonObject } from "./edit/json.ts";
import { pathApi } from "./paths.ts";
import type { AdapterParts, ConfigFormat, Item, Launch, Target } from "./types.ts";

const encoder = new TextEncoder();

export function bytes(text: string): Uint8Array {
  return encoder.encode(text);
}

/** The adapter's MCP server entry: `value` under `[...section, a.name]` in the host's config `file`. */
export function serverEntry(
  a: AdapterParts,
  file: string,
  format: ConfigFormat,
  section: string[],
  value: JsonObject,
): Item {
  return { kind: "entry", file, format, path: [...section, a.name], value, what: `MCP server ${a.name}` };
}

/** The note a remote entry needs: the host expands the token variable from its own environment. */
export function tokenNotes(l: Launch, host: string): string[] {
  return l.kind === "remote" ? [`set ${l.tokenVar} in the environment ${host} starts in`] : [];
}

/** The adapter's context as a marked block in `file`. */
export function contextItems(a: AdapterParts, file: string): Item[] {
  if (a.context === undefined) return [];
  return [{
    kind: "block",
    file,
    id: a.name,
    text: a.context.replace(/\r\n/g, "\n").replace(/\s+$/, ""),
    what: "context",
  }];
}

/** Every skill as `<root>/<name>/…`, file for file. */
export function skillItems(a: AdapterParts, t: Target, root: string): Item[] {
  const p = pathApi(t.platform);
  return a.skills.flatMap((s) =>
    s.files.map((f): Item => ({
      kind: "file",
      file: p.join(root, s.name, ...f.rel.split("/")),
      content: f.content,
      what: `skill ${s.name}`,
    }))
  );
}

/** A name that is safe as one file name on every platform. */
export function safeName(name: string): boolean {
  return /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(name) && !name.endsWith(".");
}

/** The role's tool list (a YAML list or a comma string), each exported name passed through `map`. */
export function roleTools(
  role: FrontMatterDoc,
  a: AdapterParts,
  map: (tool: string) => string,
): string[] | undefined {
  const raw = role.fields.tools;
  const list = Array.isArray(raw)
    ? raw.map(String)
    : typeof raw === "string"
    ? raw.split(",").map((s) => s.trim()).filter(Boolean)
    : undefined;
  return list?.map((tool) => a.tools.includes(tool) ? map(tool) : tool);
}

/** A markdown file with YAML front matter (undefined fields left out). */
export function frontMatterFile(fields: Record<string, unknown>, body: string): Uint8Array {
  const clean = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
  const head = stringify(clean, { lineWidth: 0 }).trimEnd();
  const text = body.replace(/^\s*\n/, "");
  return bytes(`---\n${head}\n---\n\n${text.endsWith("\n") ? text : text + "\n"}`);
}

/** Role items for hosts with file-per-role subagents; roles with unusable names are reported. */
export function roleItems(
  a: AdapterParts,
  file: (name: string) => string,
  render: (role: FrontMatterDoc) => Uint8Array,
  unsupported: string[],
): Item[] {
  const out: Item[] = [];
  for (const role of a.roles) {
    if (!safeName(role.name)) {
      unsupported.push(`role '${role.name}': not usable as a file name; rename it`);
      continue;
    }
    out.push({ kind: "file", file: file(role.name), content: render(role), what: `role ${role.name}` });
  }
  return out;
}

/** `Authorization: Bearer <ref>` with the token variable written the host's way. */
export function bearer(ref: (name: string) => string, tokenVar: string): Record<string, string> {
  return { Authorization: `Bearer ${ref(tokenVar)}` };
}

/** The one line for parts a host does not take at all. */
export function noRoles(a: AdapterParts, why: string): string[] {
  return a.roles.length ? [`roles (${a.roles.map((r) => r.name).join(", ")}): ${why}`] : [];
}

export function noSkills(a: AdapterParts, why: string): string[] {
  return a.skills.length ? [`skills (${a.skills.map((s) => s.name).join(", ")}): ${why}`] : [];
}

export function noContext(a: AdapterParts, why: string): string[] {
  return a.context !== undefined ? [`context: ${why}`] : [];
}
