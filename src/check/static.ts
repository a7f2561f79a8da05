/**
 * The static half of `hermit check`: everything that can be known from the adapter's files
 * without starting anything. Pure over the loaded manifest plus the file system; returns findings.
 * Owns the finding type, the manifest's own findings (exports, command tools, `${VAR}`s, serve,
 * host names); the adapter's content (context, skills, roles) is checked in `content.ts`.
 */
import path from "node:path";
import process from "node:process";
import { isDir, isFile } from "../adapter/content.ts";
import { SAFE_MODE_NOTICE, safeMode } from "../gates/safe_mode.ts";
import { nameBudgetWarning } from "../hosts/index.ts";
import { formatPath, type LocatedIssue, quote } from "../manifest/locate.ts";
import type { LoadedManifest } from "../manifest/load.ts";
import {
  contextFrom,
  interpolateString,
  type InterpolationContext,
  referenceSites,
} from "../manifest/interpolate.ts";
import {
  exportedName,
  exportSources,
  hostToolName,
  isGlob,
  suggest,
  type ToolSource,
} from "../manifest/names.ts";
import type { Manifest, Upstream } from "../manifest/types.ts";
import { plural } from "../lock/report.ts";
import { which } from "../platform/which.ts";
import { serveTargetMissing } from "../deploy/adapter.ts";
import { compileSchema } from "../mcp/json_schema.ts";
import { contentFindings } from "./content.ts";

export type FindingLevel = "ok" | "warning" | "problem";

export interface Finding {
  level: FindingLevel;
  /** What part of the adapter: manifest, exports, context, skills, roles, serve, names, tools, env… */
  area: string;
  message: string;
  /** `file:line:col` when the finding points at the manifest. */
  at?: string;
}

export function staticFindings(
  loaded: LoadedManifest,
  env: Record<string, string | undefined> = process.env,
): Finding[] {
  const { manifest: m, source } = loaded;
  const at = (p: (string | number)[], key = false) => {
    const { line, col } = source.locate(p, { key });
    return `${source.file}:${line}:${col}`;
  };
  const findings: Finding[] = [];
  const add = (level: FindingLevel, area: string, message: string, where?: string) =>
    findings.push({ level, area, message, at: where });
  const fromIssue = (level: FindingLevel, area: string, i: LocatedIssue) =>
    add(level, area, i.message, `${i.file}:${i.line}:${i.col}`);

  add("ok", "manifest", `${source.file} is valid (${m.name}${m.version ? " " + m.version : ""})`);
  for (const w of m.warnings) fromIssue("warning", "manifest", w);

  if (safeMode(env)) add("warning", "safe-mode", SAFE_MODE_NOTICE);

  // exports.tools: each name must come from somewhere
  const sources = exportSources(m);
  // names the manifest defines but does not export: what a misspelt export probably meant
  const unexported = [
    ...Object.keys(m.tools),
    ...Object.values(m.upstreams).flatMap((u) =>
      (u.include ?? []).filter((r) => !isGlob(r)).map((r) => exportedName(r, u))
    ),
  ].filter((n) => !m.exports.tools.includes(n));
  m.exports.tools.forEach((name, i) => {
    const s = sources.get(name) ?? [];
    if (s.length === 0) {
      const meant = suggest(name, unexported);
      add(
        "problem",
        "exports",
        `exports.tools lists '${name}', but no command tool defines it and no mcp_servers entry provides it; ${
          meant ? `did you mean '${meant}'?` : `add tools.${name} or an upstream that includes it`
        }`,
        at(["exports", "tools", i]),
      );
    } else if (s.length > 1 && s.filter((x) => x.kind === "command" || x.certain).length > 1) {
      add(
        "problem",
        "exports",
        `'${name}' is provided by more than one source (${s.map(describeSource).join(", ")}); rename one`,
        at(["exports", "tools", i]),
      );
    }
  });
  if (m.exports.tools.length === 0) {
    add(
      "warning",
      "exports",
      "no tools exported, so hosts get no tools (fine for an adapter of context, skills or roles only); list the tools to serve in exports: { tools: […] }",
      at(["exports"]),
    );
  }
  for (const name of Object.keys(m.tools)) {
    if (!m.exports.tools.includes(name)) {
      add(
        "warning",
        "exports",
        `tools.${name} is defined but not in exports.tools, so it is not served`,
        at(["tools", name], true),
      );
    }
  }
  for (const u of Object.values(m.upstreams)) {
    for (const raw of u.include ?? []) {
      if (isGlob(raw)) continue;
      const exported = exportedName(raw, u);
      if (!m.exports.tools.includes(exported)) {
        add(
          "warning",
          "exports",
          `mcp_servers.${u.name} includes ${
            quote(raw)
          }, but exports.tools does not list '${exported}', so it is not served`,
          at(["mcp_servers", u.name, "tools", "include"]),
        );
      }
    }
    if (!u.enabled) {
      add(
        "warning",
        "mcp_servers",
        `mcp_servers.${u.name} is disabled (enabled: false)`,
        at(["mcp_servers", u.name, "enabled"]),
      );
    }
  }
  if (findings.every((f) => f.area !== "exports" || f.level !== "problem") && m.exports.tools.length > 0) {
    const cmd = m.exports.tools.filter((n) => Object.hasOwn(m.tools, n)).length;
    add(
      "ok",
      "exports",
      `${plural(m.exports.tools.length, "tool")} exported (${cmd} command, ${
        m.exports.tools.length - cmd
      } from upstream servers)`,
    );
  }

  commandToolFindings(m, at, add, env);
  upstreamEnvFindings(m, at, add, env);
  findings.push(...contentFindings(m, at));
  serveFindings(m, at, add);
  nameBudgetFindings(m, at, add);
  return findings;
}

function describeSource(s: ToolSource): string {
  return s.kind === "command" ? "a command tool" : `mcp_servers.${s.server}`;
}

type At = (p: (string | number)[], key?: boolean) => string;
type Add = (level: FindingLevel, area: string, message: string, where?: string) => void;

function commandToolFindings(m: Manifest, at: At, add: Add, env: Record<string, string | undefined>): void {
  for (const t of Object.values(m.tools)) {
    const cwd = path.resolve(m.dir, t.cwd ?? ".");
    if (t.cwd && !isDir(cwd)) {
      add(
        "problem",
        "tools",
        `tools.${t.name}.cwd ${quote(t.cwd)} is not a directory in the adapter`,
        at(["tools", t.name, "cwd"]),
      );
    }
    const program = t.run[0];
    if (!which(program, { cwd, path: env.PATH })) {
      const relative = program.includes("/") || program.includes("\\");
      add(
        relative ? "problem" : "warning",
        "tools",
        relative
          ? `tools.${t.name}.run: ${quote(program)} ${
            isFile(path.resolve(cwd, program)) ? "is not executable; chmod +x it" : "does not exist"
          } (relative to ${t.cwd ?? "the adapter"})`
          : `tools.${t.name}.run: ${quote(program)} is not on this PATH; the tool fails where it is missing`,
        at(["tools", t.name, "run", 0]),
      );
    }
    // what only the validator finds (a bad pattern, a dangling $ref): every call would fail
    for (const [field, schema] of [["input", t.inputSchema], ["output", t.outputSchema]] as const) {
      const compiled = schema && compileSchema(schema);
      if (compiled && typeof compiled !== "function") {
        add(
          "problem",
          "tools",
          `tools.${t.name}.${field} is ${compiled.unusable}`,
          at(["tools", t.name, field]),
        );
      }
    }
    t.run.forEach((arg, i) => {
      if (i === 0 || !SCRIPT.test(arg) || arg.includes("${") || isFile(path.resolve(cwd, arg))) return;
      add(
        "problem",
        "tools",
        `tools.${t.name}.run: script ${quote(arg)} does not exist in the adapter`,
        at(["tools", t.name, "run", i]),
      );
    });
  }
}

const SCRIPT = /\.(sh|py|js|ts|mjs|cjs|rb|pl|ps1)$/;

/** Whether `${ref}` resolves here, asked of the interpolation itself. */
function resolves(ref: string, ctx: InterpolationContext): boolean {
  const unresolved = new Set<string>();
  interpolateString(`\${${ref}}`, ctx, unresolved);
  return unresolved.size === 0;
}

/** `${VAR}` references that will not resolve here, each pointed at the first field that uses it. */
function upstreamEnvFindings(m: Manifest, at: At, add: Add, env: Record<string, string | undefined>): void {
  const fieldsOf = (u: Upstream) => ({
    command: u.command,
    args: u.args,
    env: u.env,
    cwd: u.cwd,
    url: u.url,
    headers: u.headers,
  });
  const entries: [string, Record<string, unknown>][] = [
    ...Object.values(m.upstreams).map((
      u,
    ): [string, Record<string, unknown>] => [`mcp_servers.${u.name}`, fieldsOf(u)]),
    ...Object.values(m.tools).map((
      t,
    ): [string, Record<string, unknown>] => [`tools.${t.name}`, { env: t.env }]),
  ];
  const ctx = contextFrom(env, process.cwd());
  for (const [where, fields] of entries) {
    const base = where.split(".");
    for (const { ref, path: field } of referenceSites(fields)) {
      if (resolves(ref, ctx)) continue;
      add(
        "warning",
        "env",
        `${
          formatPath([...base, ...field])
        } uses \${${ref}}, which is not set here; it is passed on literally`,
        at([...base, ...field]),
      );
    }
  }
}

function serveFindings(m: Manifest, at: At, add: Add): void {
  // deploy writes this command into hosts' configs (and refuses this one)
  const missing = serveTargetMissing(m);
  if (missing) add("problem", "serve", missing, at(["serve", "command"]));
  if (m.serve.lifecycle !== "standalone") return;
  const instr = m.serve.instructions;
  if (!instr) {
    add(
      "problem",
      "serve",
      "serve.instructions is required for a standalone adapter: a file telling a person how to run the service (e.g. SERVICE.md)",
      at(["serve"]),
    );
  } else if (!isFile(path.resolve(m.dir, instr))) {
    add(
      "problem",
      "serve",
      `serve.instructions ${quote(instr)} does not exist in the adapter`,
      at(["serve", "instructions"]),
    );
  } else add("ok", "serve", `standalone service, instructions in ${instr}`);
}

function nameBudgetFindings(m: Manifest, at: At, add: Add): void {
  const byHostName = new Map<string, string>();
  m.exports.tools.forEach((tool, i) => {
    const full = hostToolName(m.name, tool);
    const other = byHostName.get(full);
    if (other !== undefined && other !== tool) {
      add(
        "warning",
        "names",
        `'${tool}' and '${other}' both become ${full} in hosts (characters other than letters, digits and _ turn into _); hosts drop or confuse such tools, so rename one`,
        at(["exports", "tools", i]),
      );
    }
    byHostName.set(full, tool);
    const long = nameBudgetWarning(full);
    if (long) add("warning", "names", long, at(["exports", "tools", i]));
  });
}
