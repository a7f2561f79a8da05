/**
 * Manifest rules that span fields and only need the raw (schema-valid) manifest: every name
 * exported once, no two sources exporting one name through `rename:`, and every path the adapter
 * names lying inside it. Each rule appends located errors; none throws.
 */
import path from "node:path";
import { formatPath, type LocatedIssue, type PathSeg, quote, type SourceMap } from "./locate.ts";
import type { RawManifest } from "./schema.ts";

export function checkRules(raw: RawManifest, src: SourceMap, errors: LocatedIssue[]): void {
  checkDuplicateExports(raw, src, errors);
  checkRenameCollisions(raw, src, errors);
  checkInside(raw, src, errors);
}

function checkDuplicateExports(raw: RawManifest, src: SourceMap, errors: LocatedIssue[]): void {
  const seen = new Set<string>();
  (raw.exports?.tools ?? []).forEach((name, i) => {
    if (seen.has(name)) {
      errors.push(
        src.issue(["exports", "tools", i], `exports.tools lists ${quote(name)} twice; remove the repeat`),
      );
    }
    seen.add(name);
  });
}

/** A rename target that is also a command tool, or the target of another rename. */
function checkRenameCollisions(raw: RawManifest, src: SourceMap, errors: LocatedIssue[]): void {
  const owner = new Map<string, string>();
  for (const name of Object.keys(raw.tools ?? {})) owner.set(name, `tools.${name}`);
  for (const [server, u] of Object.entries(raw.mcp_servers ?? {})) {
    for (const [rawName, exported] of Object.entries(u.rename ?? {})) {
      const at = ["mcp_servers", server, "rename", rawName];
      const other = owner.get(exported);
      if (other) {
        errors.push(
          src.issue(
            at,
            `${formatPath(at)} exports ${
              quote(exported)
            }, which ${other} already provides; choose another name`,
          ),
        );
      } else owner.set(exported, formatPath(at));
    }
  }
}

const EXAMPLES: Record<string, string> = {
  context: "CONTEXT.md",
  skills: "skills/",
  roles: "roles/",
  instructions: "SERVICE.md",
  cwd: "tools/",
};

/**
 * Files and folders the adapter names (context, skills, roles, instructions, a tool's cwd) lie
 * inside it: deploy copies them into hosts, and `../` or an absolute path would reach anywhere.
 */
function checkInside(raw: RawManifest, src: SourceMap, errors: LocatedIssue[]): void {
  const fields: [PathSeg[], string | undefined][] = [
    [["exports", "context"], raw.exports?.context],
    [["exports", "skills"], raw.exports?.skills],
    [["exports", "roles"], raw.exports?.roles],
    [["serve", "instructions"], raw.serve?.instructions],
  ];
  for (const [name, t] of Object.entries(raw.tools ?? {})) fields.push([["tools", name, "cwd"], t.cwd]);
  for (const [at, rel] of fields) {
    if (rel === undefined || inside(rel)) continue;
    const e = EXAMPLES[String(at[at.length - 1])];
    errors.push(src.issue(at, `${formatPath(at)} must be a relative path inside the adapter, e.g. ${e}`));
  }
}

function inside(rel: string): boolean {
  if (rel.trim() === "" || path.posix.isAbsolute(rel) || path.win32.isAbsolute(rel)) return false;
  const norm = path.posix.normalize(rel.replaceAll("\\", "/"));
  return norm !== ".." && !norm.startsWith("../");
}
