/**
 * The non-tool parts of an adapter: the context file, skills (`skills/<name>/SKILL.md`, each with
 * the files of its directory) and roles (`roles/<name>.md`), each with its YAML front matter.
 * `check` validates them; `deploy` and `convert` copy them into hosts. Everything must lie inside
 * the adapter: a path or symbolic link that leads out of it is a usage error naming it and its
 * target, so nothing from elsewhere on the machine is ever copied into a project.
 */
import { lstatSync, readdirSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { usageError } from "../errors.ts";
import type { Manifest } from "../manifest/types.ts";
import {
  describeBytes,
  FileTooLarge,
  MiB,
  NotAFile,
  NotUtf8,
  readTextCapped,
} from "../platform/read_capped.ts";

/** Context, SKILL.md and role files are read whole and parsed: none may be larger than this. */
export const MAX_DOC_BYTES = 1 * MiB;

/** The text of a context, skill or role file, at most `MAX_DOC_BYTES` (`FileTooLarge` past it). */
export function readAdapterDoc(file: string): string {
  return readTextCapped(file, MAX_DOC_BYTES);
}

/** Why a document could not be read, in a few words. */
export function unreadable(err: unknown): string {
  if (err instanceof FileTooLarge) {
    return `is too large (${err.size ?? "more than"} bytes; at most ${describeBytes(err.limit)})`;
  }
  if (err instanceof NotAFile) return `is not a regular file (a ${err.kind})`;
  if (err instanceof NotUtf8) return `is not UTF-8 text (line ${err.line})`;
  return `cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"})`;
}

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
    text = readAdapterDoc(file);
  } catch (err) {
    return { file, name: fallbackName, fields: {}, body: "", problems: [unreadable(err)] };
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

/** Where `p` really is when that is outside the adapter; undefined when inside it or missing. */
export function outsideAdapter(m: Manifest, p: string): string | undefined {
  let real: string;
  try {
    real = realpathSync(p);
  } catch {
    return undefined; // missing: the caller says so in its own words
  }
  const rel = path.relative(realpathSync(m.dir), real);
  const inside = rel === "" || (rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
  return inside ? undefined : real;
}

/** `p`, or a usage error when it leads out of the adapter (`what` names it in the message). */
function insideAdapter(m: Manifest, p: string, what = path.relative(m.dir, p)): string {
  const real = outsideAdapter(m, p);
  if (real === undefined) return p;
  throw usageError(
    `${what} leads to ${real}, outside the adapter ${m.dir}; hermit takes nothing from outside the adapter: copy the file into it`,
  );
}

/** The context file (`exports.context`), inside the adapter. */
export function contextPath(m: Manifest): string | undefined {
  const rel = m.exports.context;
  return rel ? insideAdapter(m, path.resolve(m.dir, rel), `exports.context ${rel}`) : undefined;
}

/** The `exports.skills` or `exports.roles` folder: a usage error when it is missing or outside. */
function folder(m: Manifest, key: "skills" | "roles"): string | undefined {
  const rel = m.exports[key];
  if (!rel) return undefined;
  const dir = path.resolve(m.dir, rel);
  if (!isDir(dir)) {
    throw usageError(`exports.${key} names ${rel}, which is not a directory in the adapter; check ${m.dir}`);
  }
  return insideAdapter(m, dir, `exports.${key} ${rel}`);
}

/** Skills: each directory under the skills folder holding a SKILL.md. */
export function listSkills(m: Manifest): FrontMatterDoc[] {
  const root = folder(m, "skills");
  if (!root) return [];
  return entries(root)
    .filter((d) => isFile(path.join(root, d, "SKILL.md")))
    .map((d) => readDoc(insideAdapter(m, path.join(root, d, "SKILL.md")), d));
}

/** Roles: each `*.md` file in the roles folder. */
export function listRoles(m: Manifest): FrontMatterDoc[] {
  const root = folder(m, "roles");
  if (!root) return [];
  return entries(root)
    .filter((f) => f.endsWith(".md") && isFile(path.join(root, f)))
    .map((f) => readDoc(insideAdapter(m, path.join(root, f)), f.slice(0, -3)));
}

/**
 * Every regular file under a skill directory, as `/`-separated relative paths, sorted. Links are
 * followed only while they stay inside the adapter; one that leads out, or a loop, is a usage error.
 */
export function skillFiles(m: Manifest, dir: string): string[] {
  const names = (rel: string): string[] => {
    try {
      return readdirSync(path.join(dir, rel)).sort();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? "error";
      throw usageError(
        `${path.relative(m.dir, path.join(dir, rel))} cannot be read (${code}); check ${m.dir}`,
      );
    }
  };
  const walk = (rel: string, above: Set<string>): string[] => {
    const out: string[] = [];
    for (const name of names(rel)) {
      const r = rel ? `${rel}/${name}` : name;
      const p = path.join(dir, r);
      if (lstatSync(p).isSymbolicLink()) insideAdapter(m, p);
      const st = statSync(p, { throwIfNoEntry: false });
      if (st?.isDirectory()) {
        const real = realpathSync(p);
        if (above.has(real)) {
          throw usageError(`${path.relative(m.dir, p)} is a symbolic link loop; remove it`);
        }
        out.push(...walk(r, new Set([...above, real])));
      } else if (st?.isFile() && name !== ".DS_Store") out.push(r);
    }
    return out;
  };
  return walk("", new Set([realpathSync(dir)]));
}

/** The names in a directory, sorted; none when it is unreadable. */
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
