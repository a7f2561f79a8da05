/**
 * The adapter's content as `check` findings: `exports.context` is a file, `exports.skills` and
 * `exports.roles` are directories whose documents parse (their front-matter problems are
 * warnings), and what deploy would refuse (a path or link leading out of the adapter) is a
 * problem here. Over the manifest plus the file system; nothing is started.
 */
import { safeName } from "../hosts/parts.ts";
import path from "node:path";
import {
  contextPath,
  type FrontMatterDoc,
  isDir,
  isFile,
  listRoles,
  listSkills,
  skillFiles,
} from "../adapter/content.ts";
import { HermitError } from "../errors.ts";
import { quote } from "../manifest/locate.ts";
import type { Manifest } from "../manifest/types.ts";
import type { Finding, FindingLevel } from "./static.ts";

/** `at(path)`: the manifest's `file:line:col` of that field. */
export function contentFindings(m: Manifest, at: (p: (string | number)[]) => string): Finding[] {
  const findings: Finding[] = [];
  const add = (level: FindingLevel, area: string, message: string, where?: string) =>
    findings.push({ level, area, message, at: where });
  // What deploy would refuse (a path or link leading out of the adapter) is a problem here.
  const refused = (area: string, where: string | undefined, fn: () => void): boolean => {
    try {
      fn();
      return false;
    } catch (err) {
      if (!(err instanceof HermitError)) throw err;
      add("problem", area, err.message, where);
      return true;
    }
  };
  if (m.exports.context) {
    const where = at(["exports", "context"]);
    let ctx: string | undefined;
    if (!refused("context", where, () => ctx = contextPath(m))) {
      if (!isFile(ctx!)) {
        add(
          "problem",
          "context",
          `exports.context ${quote(m.exports.context)} does not exist in the adapter`,
          where,
        );
      } else add("ok", "context", `context ${m.exports.context}`);
    }
  }
  for (const [key, list] of [["skills", listSkills], ["roles", listRoles]] as const) {
    const rel = m.exports[key];
    if (!rel) continue;
    if (!isDir(path.resolve(m.dir, rel))) {
      add(
        "problem",
        key,
        `exports.${key} ${quote(rel)} is not a directory in the adapter`,
        at(["exports", key]),
      );
      continue;
    }
    let docs: FrontMatterDoc[] = [];
    if (refused(key, at(["exports", key]), () => docs = list(m))) continue;
    for (const d of docs) {
      for (const p of d.problems) add("warning", key, `${path.relative(m.dir, d.file)}: ${p}`);
      // a role is deployed as a file under its own name (a skill under its folder's, which exists)
      const name = d.name;
      if (key === "roles" && !safeName(name)) {
        add(
          "warning",
          key,
          `${
            path.relative(m.dir, d.file)
          }: name '${name}' is not usable as a file name (letters, digits, ., _ and -); deploy leaves it out`,
        );
      }
      if (key === "skills") {
        const problem = skillNameProblem(name, path.basename(path.dirname(d.file)));
        if (problem) add("warning", key, `${path.relative(m.dir, d.file)}: ${problem}`);
        refused(key, undefined, () => skillFiles(m, path.dirname(d.file)));
      }
    }
    add("ok", key, `${docs.length} ${docs.length === 1 ? key.slice(0, -1) : key} in ${rel}`);
  }
  return findings;
}

/**
 * Why a skill's name is not one hosts that follow the Agent Skills format take (lowercase letters,
 * digits and single hyphens, at most 64 characters, the same as its folder's), or undefined. Pure.
 */
export function skillNameProblem(name: string, folder: string): string | undefined {
  if (!/^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(name) || name.length > 64) {
    return `name ${
      quote(name)
    } is not a skill name (lowercase letters, digits and single hyphens, at most 64 characters): hosts may not load it; rename it and its folder`;
  }
  if (name !== folder) {
    return `name ${quote(name)} differs from its folder ${
      quote(folder)
    }: hosts load a skill by its folder's name; make them the same`;
  }
  return undefined;
}
