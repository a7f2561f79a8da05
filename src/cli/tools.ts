/**
 * `hermit tools DIR`: the effective tool list: source, trust, read-only, scan findings, and how
 * each server and command tool is confined.
 */
import type { Command } from "@commander-js/extra-typings";
import { Exit } from "../errors.ts";
import { omitEvents, setLogLevel } from "../log.ts";
import { loadManifest } from "../manifest/load.ts";
import type { SetExit } from "./app.ts";
import { examples } from "./help.ts";
import { color, printJson, writeOut } from "./output.ts";

/** Believed access; a server's claim hermit does not believe is shown beside it. */
function accessOf(r: { readOnly: boolean; claimsReadOnly: boolean }): string {
  if (r.readOnly) return "read-only ";
  return r.claimsReadOnly ? "writes (claims read-only, not believed) " : "writes    ";
}

export function registerTools(program: Command, setExit: SetExit): void {
  program.command("tools")
    .description(
      "list the tools an adapter serves: source, trust, read-only flag and description-scan findings (exit 3 when an exported tool is missing)",
    )
    .addHelpText(
      "after",
      examples(
        ["hermit tools my-tools", "what a host will see"],
        ["hermit tools my-tools --json"],
      ),
    )
    .argument("[dir]", "the adapter directory", ".")
    .option("--json", "print the list as JSON")
    .option("-v, --verbose", "show upstream servers' stderr")
    .action(async (dir, opts) => {
      if (!opts.verbose) setLogLevel("warn");
      omitEvents(["upstream-failed", "not-served"]); // the list's missing: lines say them
      const manifest = loadManifest(dir);
      const { effectiveTools } = await import("../mcp/diagnostics.ts");
      const report = await effectiveTools(manifest, opts.verbose);
      if (opts.json) await printJson(report);
      else {
        const header = `${"TOOL".padEnd(24)} ${"SOURCE".padEnd(28)} ${"TRUST".padEnd(9)} ACCESS`;
        const lines = report.tools.map((r) =>
          `${r.name.padEnd(24)} ${
            (r.source + (r.raw && r.raw !== r.name ? ` (${r.raw})` : "")).padEnd(28)
          } ` +
          `${r.trust.padEnd(9)} ${accessOf(r)} ` +
          (r.findings.length
            ? color.yellow(
              `${r.findings.length} scan finding(s): ${
                r.findings.map((f) => `${f.where}: ${f.rule}`).join("; ")
              }`,
            )
            : "")
        );
        const extra = [
          ...(report.safeMode ? ["safe mode: no upstream server and no command tool is loaded"] : []),
          ...report.sandbox.map((c) => {
            const line = `sandbox: ${c.where}: ${c.summary}`;
            const off = c.summary.startsWith("off");
            return off || c.missing.length
              ? color.yellow(
                `${line}${c.missing.length ? `; not enforced here: ${c.missing.join("; ")}` : ""}`,
              )
              : line;
          }),
          ...report.missing.map((m) => color.red(`missing: ${m.name}: ${m.why}`)),
          ...report.refused.map((r) => color.red(`refused: ${r.where}: ${r.reason}`)),
        ];
        await writeOut([header, ...lines, ...extra].join("\n") + "\n");
      }
      setExit(report.refused.length ? Exit.refused : report.missing.length ? Exit.problems : Exit.ok);
    });
}
