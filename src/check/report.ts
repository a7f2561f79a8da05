/**
 * A check's verdict and how it reads: one line per finding for people, one object for scripts.
 */
import { color } from "../cli/output.ts";
import type { Manifest } from "../manifest/types.ts";
import type { Finding } from "./static.ts";

export interface CheckReport {
  adapter: string;
  version?: string;
  dir: string;
  verdict: "healthy" | "problems";
  problems: number;
  warnings: number;
  findings: Finding[];
}

export function buildReport(m: Manifest, findings: Finding[]): CheckReport {
  const problems = findings.filter((f) => f.level === "problem").length;
  return {
    adapter: m.name,
    version: m.version,
    dir: m.dir,
    verdict: problems > 0 ? "problems" : "healthy",
    problems,
    warnings: findings.filter((f) => f.level === "warning").length,
    findings,
  };
}

const label = { ok: color.green("ok     "), warning: color.yellow("warning"), problem: color.red("problem") };

export function renderReport(r: CheckReport): string {
  const lines = [`hermit check: ${r.adapter}${r.version ? " " + r.version : ""}`];
  for (const f of r.findings) lines.push(`  ${label[f.level]}  ${f.at ? f.at + ": " : ""}${f.message}`);
  const counts = `${r.problems} problem${r.problems === 1 ? "" : "s"}, ${r.warnings} warning${
    r.warnings === 1 ? "" : "s"
  }`;
  lines.push(
    r.verdict === "healthy" ? color.green(`healthy (${counts})`) : color.red(`problems found (${counts})`),
  );
  return lines.join("\n") + "\n";
}
