/**
 * What deploy and convert take from an adapter: the launch (the hermit binary's absolute path and
 * `serve.command`'s arguments, `.` and `./…` made absolute; or a remote URL with the token named,
 * never included), the context text, the skill directories file by file, and the roles.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { contextPath, listRoles, listSkills } from "../adapter/content.ts";
import { usageError } from "../errors.ts";
import type { AdapterParts, Launch, SkillFiles } from "../hosts/types.ts";
import { TOKEN_VAR } from "../hosts/types.ts";
import type { Manifest } from "../manifest/types.ts";

/** `serve.command` as words (single and double quotes group, as in a shell). */
export function splitWords(line: string): string[] {
  const out: string[] = [];
  for (const m of line.matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g)) {
    out.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, "$1") : m[2] ?? m[3]);
  }
  return out;
}

export function stdioLaunch(m: Manifest, self: string[]): Launch {
  const words = splitWords(m.serve.command).slice(1); // `hermit` → the binary
  const args = words.map((w) =>
    w === "." || w === "./" ? m.dir : /^\.\.?[\\/]/.test(w) ? path.resolve(m.dir, w) : w
  );
  return { kind: "stdio", command: self[0], args: [...self.slice(1), ...args] };
}

export function remoteLaunch(url: string): Launch {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw usageError(`--serve-url '${url}' is not a URL; e.g. --serve-url http://127.0.0.1:8765/mcp`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw usageError(`--serve-url must be an http:// or https:// URL, got '${url}'`);
  }
  if (parsed.username || parsed.password) {
    throw usageError(`--serve-url must not carry credentials; the token comes from ${TOKEN_VAR}`);
  }
  return { kind: "remote", url: parsed.href, tokenVar: TOKEN_VAR };
}

/** Every regular file under `dir`, as `/`-separated relative paths, sorted. */
function filesUnder(dir: string, rel = ""): string[] {
  const out: string[] = [];
  for (const name of readdirSync(path.join(dir, rel)).sort()) {
    const r = rel ? `${rel}/${name}` : name;
    const st = statSync(path.join(dir, r));
    if (st.isDirectory()) out.push(...filesUnder(dir, r));
    else if (st.isFile() && name !== ".DS_Store") out.push(r);
  }
  return out;
}

function skills(m: Manifest): SkillFiles[] {
  return listSkills(m).map((doc) => {
    const dir = path.dirname(doc.file);
    return {
      name: path.basename(dir),
      files: filesUnder(dir).map((rel) => ({
        rel,
        content: new Uint8Array(readFileSync(path.join(dir, rel))),
      })),
    };
  });
}

export function adapterParts(m: Manifest, launch: Launch): AdapterParts {
  const ctx = contextPath(m);
  let context: string | undefined;
  if (ctx) {
    try {
      context = readFileSync(ctx, "utf8");
    } catch {
      throw usageError(
        `exports.context names ${path.relative(m.dir, ctx)}, which cannot be read; check ${m.dir}`,
      );
    }
  }
  return {
    name: m.name,
    dir: m.dir,
    launch,
    context,
    skills: skills(m),
    roles: listRoles(m),
    tools: m.exports.tools,
  };
}
