/**
 * The static half of `hermit check`: everything that can be known from the adapter's files
 * without starting anything. Pure over the loaded manifest plus the file system; returns findings.
 */
import path from "node:path";
import process from "node:process";
import { contextPath, isDir, isFile, listRoles, listSkills } from "../adapter/content.ts";
import type { LocatedIssue } from "../manifest/locate.ts";
import type { LoadedManifest } from "../manifest/load.ts";
import { referencedNames } from "../manifest/interpolate.ts";
import { exportedName, hostToolName, isGlob, matchesAny, passesFilter } from "../manifest/names.ts";
import type { Manifest, Upstream } from "../manifest/types.ts";
import { which } from "../platform/which.ts";

export type FindingLevel = "ok" | "warning" | "problem";

export interface Finding {
  level: FindingLevel;
  /** What part of the adapter: manifest, exports, context, skills, roles, serve, names, tools, env… */
  area: string;
  message: string;
  /** `file:line:col` when the finding points at the manifest. */
  at?: string;
}

export const NAME_BUDGET = { default: 64, cursor: 60 } as const;

/** Where an exported tool comes from, as far as the manifest alone can tell. */
export type ToolSource =
  | { kind: "command" }
  | { kind: "upstream"; server: string; raw: string; certain: boolean };

export function exportSources(m: Manifest): Map<string, ToolSource[]> {
  const out = new Map<string, ToolSource[]>();
  for (const name of m.exports.tools) {
    const sources: ToolSource[] = [];
    if (m.tools[name]) sources.push({ kind: "command" });
    for (const u of Object.values(m.upstreams)) {
      const claim = upstreamClaim(u, name);
      if (claim) sources.push(claim);
    }
    out.set(name, sources);
  }
  return out;
}

/** Does upstream `u` (by its filter, rename and prefix) provide the exported name `name`? */
function upstreamClaim(u: Upstream, name: string): ToolSource | undefined {
  const renamedFrom = Object.entries(u.rename).find(([, to]) => to === name)?.[0];
  const candidates = renamedFrom !== undefined ? [renamedFrom] : [];
  if (name.startsWith(u.prefix)) {
    const raw = name.slice(u.prefix.length);
    if (raw && exportedName(raw, u) === name) candidates.push(raw);
  }
  for (const raw of candidates) {
    if (u.include !== undefined) {
      if (u.include.includes(raw)) return { kind: "upstream", server: u.name, raw, certain: true };
      if (matchesAny(raw, u.include)) return { kind: "upstream", server: u.name, raw, certain: false };
    } else if (passesFilter(raw, { exclude: u.exclude })) {
      return { kind: "upstream", server: u.name, raw, certain: false };
    }
  }
  return undefined;
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

  if (env.HERMIT_SAFE_MODE === "1") {
    add("warning", "safe-mode", "HERMIT_SAFE_MODE=1: no upstream server and no command tool will load");
  }

  // exports.tools: each name must come from somewhere
  const sources = exportSources(m);
  m.exports.tools.forEach((name, i) => {
    const s = sources.get(name) ?? [];
    if (s.length === 0) {
      add(
        "problem",
        "exports",
        `exports.tools lists '${name}', but no command tool defines it and no mcp_servers entry provides it; add tools.${name} or an upstream that includes it`,
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
    add("warning", "exports", "exports.tools is empty: hosts will get no tools", at(["exports"]));
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
          `mcp_servers.${u.name} includes '${raw}', but exports.tools does not list '${exported}', so it is not served`,
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
    const cmd = m.exports.tools.filter((n) => m.tools[n]).length;
    add(
      "ok",
      "exports",
      `${m.exports.tools.length} tools exported (${cmd} command, ${
        m.exports.tools.length - cmd
      } from upstream servers)`,
    );
  }

  commandToolFindings(m, at, add, env);
  upstreamEnvFindings(m, at, add, env);
  contentFindings(m, at, add);
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
        `tools.${t.name}.cwd '${t.cwd}' is not a directory in the adapter`,
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
          ? `tools.${t.name}.run: '${program}' is not an executable file (relative to ${
            t.cwd ?? "the adapter"
          })`
          : `tools.${t.name}.run: '${program}' is not on this PATH; the tool fails where it is missing`,
        at(["tools", t.name, "run", 0]),
      );
    }
    for (const arg of t.run.slice(1)) {
      if (
        /\.(sh|py|js|ts|mjs|rb|pl|ps1)$/.test(arg) && !arg.includes("${") && !isFile(path.resolve(cwd, arg))
      ) {
        add(
          "problem",
          "tools",
          `tools.${t.name}.run: script '${arg}' does not exist in the adapter`,
          at(["tools", t.name, "run"]),
        );
      }
    }
  }
}

function upstreamEnvFindings(m: Manifest, at: At, add: Add, env: Record<string, string | undefined>): void {
  const context = new Set(["userHome", "workspaceFolder", "workspaceFolderBasename", "pathSeparator", "/"]);
  for (const u of Object.values(m.upstreams)) {
    const fields = {
      command: u.command,
      args: u.args,
      env: u.env,
      cwd: u.cwd,
      url: u.url,
      headers: u.headers,
    };
    for (const ref of referencedNames(fields)) {
      const name = ref.startsWith("env:") ? ref.slice(4) : ref;
      if (context.has(ref) || env[name] !== undefined) continue;
      add(
        "warning",
        "env",
        `mcp_servers.${u.name} uses \${${ref}}, which is not set here; it is passed on literally`,
        at(["mcp_servers", u.name]),
      );
    }
  }
  for (const t of Object.values(m.tools)) {
    for (const ref of referencedNames(t.env)) {
      const name = ref.startsWith("env:") ? ref.slice(4) : ref;
      if (!context.has(ref) && env[name] === undefined) {
        add(
          "warning",
          "env",
          `tools.${t.name}.env uses \${${ref}}, which is not set here; it is passed on literally`,
          at(["tools", t.name, "env"]),
        );
      }
    }
  }
}

function contentFindings(m: Manifest, at: At, add: Add): void {
  const ctx = contextPath(m);
  if (ctx) {
    if (!isFile(ctx)) {
      add(
        "problem",
        "context",
        `exports.context '${m.exports.context}' does not exist in the adapter`,
        at(["exports", "context"]),
      );
    } else add("ok", "context", `context ${m.exports.context}`);
  }
  for (const [key, list] of [["skills", listSkills], ["roles", listRoles]] as const) {
    const rel = m.exports[key];
    if (!rel) continue;
    if (!isDir(path.resolve(m.dir, rel))) {
      add("problem", key, `exports.${key} '${rel}' is not a directory in the adapter`, at(["exports", key]));
      continue;
    }
    const docs = list(m);
    for (const d of docs) {
      for (const p of d.problems) add("warning", key, `${path.relative(m.dir, d.file)}: ${p}`);
    }
    add("ok", key, `${docs.length} ${key} in ${rel}`);
  }
}

function serveFindings(m: Manifest, at: At, add: Add): void {
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
      `serve.instructions '${instr}' does not exist in the adapter`,
      at(["serve", "instructions"]),
    );
  } else add("ok", "serve", `standalone service, instructions in ${instr}`);
}

function nameBudgetFindings(m: Manifest, at: At, add: Add): void {
  m.exports.tools.forEach((tool, i) => {
    const full = hostToolName(m.name, tool);
    if (full.length > NAME_BUDGET.default) {
      add(
        "warning",
        "names",
        `${full} is ${full.length} characters; Claude Code, Codex and others cap tool names at 64: shorten the adapter or tool name`,
        at(["exports", "tools", i]),
      );
    } else if (full.length > NAME_BUDGET.cursor) {
      add(
        "warning",
        "names",
        `${full} is ${full.length} characters; Cursor caps tool names at 60`,
        at(["exports", "tools", i]),
      );
    }
  });
}
