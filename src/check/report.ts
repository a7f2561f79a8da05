/**
 * A check's verdict and how it reads: one line per finding for people, one object for scripts.
 * Colour is the caller's to choose (the command passes its terminal's); none by default.
 */
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

/** How labels and the verdict are coloured. */
export interface Paint {
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
}

const plain: Paint = { red: (s) => s, green: (s) => s, yellow: (s) => s };

export function renderReport(r: CheckReport, color: Paint = plain): string {
  const label = {
    ok: color.green("ok     "),
    warning: color.yellow("warning"),
    problem: color.red("problem"),
  };
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
