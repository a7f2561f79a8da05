/** `hermit check DIR`: is this adapter sound? Exit 0 healthy, 3 problems. */
import type { Command } from "@commander-js/extra-typings";
import { buildReport, renderReport } from "../check/report.ts";
import { staticFindings } from "../check/static.ts";
import { Exit } from "../errors.ts";
import { loadManifestWithSource } from "../manifest/load.ts";
import type { SetExit } from "./app.ts";
import { printJson, writeOut } from "./output.ts";

export function registerCheck(program: Command, setExit: SetExit): void {
  program.command("check")
    .description(
      "check an adapter: manifest, exports, context, skills, roles, serve settings and name budget",
    )
    .argument("[dir]", "the adapter directory", ".")
    .option("--json", "print the report as JSON")
    .action(async (dir, opts) => {
      const loaded = loadManifestWithSource(dir);
      const report = buildReport(loaded.manifest, staticFindings(loaded));
      if (opts.json) await printJson(report);
      else await writeOut(renderReport(report));
      setExit(report.verdict === "healthy" ? Exit.ok : Exit.problems);
    });
}
