/**
 * The non-tool parts of an adapter: the context file, skills (`skills/<name>/SKILL.md`) and roles
 * (`roles/<name>.md`), each with its YAML front matter. `check` validates them; `deploy` and
 * `convert` copy them into hosts.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import type { Manifest } from "../manifest/types.ts";

export interface FrontMatterDoc {
  /** Absolute path of the markdown file. */
  file: string;
  name: string;
  description?: string;
  /** Every front matter field, as parsed. */
  fields: Record<string, unknown>;
  body: string;
  /** Problems a host would trip over (missing name or description, bad front matter). */
  problems: string[];
}

const FRONT = /^\uFEFF?---[ \t]*\r?\n(?:([\s\S]*?)\r?\n)?---[ \t]*(?:\r?\n|$)([\s\S]*)$/;

export function parseFrontMatter(
  text: string,
): { fields: Record<string, unknown>; body: string; error?: string; found: boolean } {
  const m = FRONT.exec(text);
  if (!m) return { fields: {}, body: text, found: false };
  const fm = parseFrontMatterYaml(m[1] ?? "");
  return { ...fm, body: m[2], found: true };
}

function parseFrontMatterYaml(yaml: string): { fields: Record<string, unknown>; error?: string } {
  try {
    const parsed = parseYaml(yaml, { logLevel: "error", maxAliasCount: 100 });
    if (parsed === null || parsed === undefined) return { fields: {} };
    if (typeof parsed !== "object" || Array.isArray(parsed)) {
      return { fields: {}, error: "front matter is not a mapping; write name: and description: lines" };
    }
    return { fields: parsed as Record<string, unknown> };
  } catch (err) {
    return {
      fields: {},
      error: `front matter is not valid YAML (${String((err as Error).message).split("\n")[0]})`,
    };
  }
}

function readDoc(file: string, fallbackName: string): FrontMatterDoc {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    const why = `cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"})`;
    return { file, name: fallbackName, fields: {}, body: "", problems: [why] };
  }
  const { fields, body, error, found } = parseFrontMatter(text);
  if (!found) {
    const why = "has no front matter; start the file with ---, name: …, description: …, ---";
    return { file, name: fallbackName, fields, body, problems: [why] };
  }
  const problems: string[] = error ? [error] : [];
  const name = typeof fields.name === "string" && fields.name ? fields.name : fallbackName;
  if (typeof fields.name !== "string" || !fields.name) problems.push("front matter has no name");
  const description = typeof fields.description === "string" && fields.description.trim()
    ? fields.description
    : undefined;
  if (!description) problems.push("front matter has no description");
  return { file, name, description, fields, body, problems };
}

export function contextPath(m: Manifest): string | undefined {
  return m.exports.context ? path.resolve(m.dir, m.exports.context) : undefined;
}

/** Skills: each directory under the skills folder holding a SKILL.md. */
export function listSkills(m: Manifest): FrontMatterDoc[] {
  if (!m.exports.skills) return [];
  const root = path.resolve(m.dir, m.exports.skills);
  return entries(root)
    .filter((d) => isFile(path.join(root, d, "SKILL.md")))
    .map((d) => readDoc(path.join(root, d, "SKILL.md"), d));
}

/** Roles: each `*.md` file in the roles folder. */
export function listRoles(m: Manifest): FrontMatterDoc[] {
  if (!m.exports.roles) return [];
  const root = path.resolve(m.dir, m.exports.roles);
  return entries(root)
    .filter((f) => f.endsWith(".md") && isFile(path.join(root, f)))
    .map((f) => readDoc(path.join(root, f), f.slice(0, -3)));
}

/** The names in a directory, sorted; none when it is missing or unreadable. */
function entries(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}

export function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

export function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}
