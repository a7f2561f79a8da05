/**
 * The non-tool parts of an adapter: the context file, skills (`skills/<name>/SKILL.md`) and roles
 * (`roles/<name>.md`), each with its YAML front matter. `check` validates them; `deploy` and
 * `convert` copy them into hosts.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
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

const FRONT = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/;

export function parseFrontMatter(
  text: string,
): { fields: Record<string, unknown>; body: string; error?: string } {
  const m = FRONT.exec(text);
  if (!m) return { fields: {}, body: text };
  try {
    const parsed = parseYaml(m[1]);
    if (parsed === null || parsed === undefined) return { fields: {}, body: m[2] };
    if (typeof parsed !== "object" || Array.isArray(parsed)) {
      return { fields: {}, body: m[2], error: "front matter is not a mapping" };
    }
    return { fields: parsed as Record<string, unknown>, body: m[2] };
  } catch (err) {
    return {
      fields: {},
      body: m[2],
      error: `front matter is not valid YAML (${String((err as Error).message).split("\n")[0]})`,
    };
  }
}

function readDoc(file: string, fallbackName: string): FrontMatterDoc {
  const text = readFileSync(file, "utf8");
  const { fields, body, error } = parseFrontMatter(text);
  const problems: string[] = error ? [error] : [];
  const name = typeof fields.name === "string" && fields.name ? fields.name : fallbackName;
  if (typeof fields.name !== "string") problems.push("front matter has no name");
  const description = typeof fields.description === "string" ? fields.description : undefined;
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
  if (!isDir(root)) return [];
  return readdirSync(root).sort()
    .filter((d) => existsSync(path.join(root, d, "SKILL.md")))
    .map((d) => readDoc(path.join(root, d, "SKILL.md"), d));
}

/** Roles: each `*.md` file in the roles folder. */
export function listRoles(m: Manifest): FrontMatterDoc[] {
  if (!m.exports.roles) return [];
  const root = path.resolve(m.dir, m.exports.roles);
  if (!isDir(root)) return [];
  return readdirSync(root).sort()
    .filter((f) => f.endsWith(".md") && statSync(path.join(root, f)).isFile())
    .map((f) => readDoc(path.join(root, f), f.slice(0, -3)));
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
