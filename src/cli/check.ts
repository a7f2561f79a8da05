/**
 * `hermit check DIR`: is this adapter sound? The static rules, config screening, then the live
 * health rule (start it, `initialize`, compare `tools/list` with `exports.tools`), which runs every
 * server inside its sandbox. Exit 0 healthy, 3 problems, 4 when screening or the sandbox refuses
 * an entry.
 */
import type { Command } from "@commander-js/extra-typings";
import { buildReport, renderReport } from "../check/report.ts";
import { sandboxFindings } from "../check/sandbox.ts";
import { screeningFindings } from "../check/screening.ts";
import { staticFindings } from "../check/static.ts";
import { Exit } from "../errors.ts";
import { omitEvents } from "../log.ts";
import { lockStaticFindings } from "../lock/findings.ts";
import { loadManifestWithSource } from "../manifest/load.ts";
import type { SetExit } from "./app.ts";
import { examples } from "./help.ts";
import { positiveSeconds } from "./options.ts";
import { color, printJson, writeOut } from "./output.ts";

export function registerCheck(program: Command, setExit: SetExit): void {
  program.command("check")
    .description(
      "check an adapter: manifest, exports, screening, context, skills, roles, name budget, then a live start",
    )
    .addHelpText(
      "after",
      examples(
        ["hermit check my-tools", "everything, with a live start"],
        ["hermit check my-tools --static --json", "no start; the report as JSON"],
      ),
    )
    .argument("[dir]", "the adapter directory", ".")
    .option("--json", "print the report as JSON")
    .option("--static", "skip the live start (no process is started)")
    .option("--timeout <seconds>", "how long the live start may take", positiveSeconds("--timeout"), 90)
    .action(async (dir, opts) => {
      const loaded = loadManifestWithSource(dir);
      const findings = [
        ...staticFindings(loaded),
        ...screeningFindings(loaded.manifest),
        ...lockStaticFindings(loaded.manifest),
        ...sandboxFindings(loaded.manifest),
      ];
      if (!opts.static) {
        const live = { timeoutMs: opts.timeout * 1000, reported: new Set(findings.map((f) => f.message)) };
        if (loaded.manifest.serve.lifecycle === "standalone") {
          const { standaloneFindings } = await import("../check/standalone.ts");
          findings.push(...await standaloneFindings(loaded.manifest, live));
        } else {
          const { liveFindings } = await import("../check/live.ts");
          findings.push(...await liveFindings(loaded.manifest, live));
        }
        // tools missing from the live list: show the ones hermit.lock withholds, with their diff
        if (findings.some((f) => f.area === "health" && f.level === "problem")) {
          // the servers start again in process: what fails is in the report already, once
          omitEvents(["upstream-failed", "not-served"]);
          const { lockLiveFindings } = await import("../lock/findings.ts");
          findings.push(...await lockLiveFindings(loaded.manifest));
        }
      }
      const report = buildReport(loaded.manifest, findings);
      if (opts.json) await printJson(report);
      else await writeOut(renderReport(report, color));
      const refused = findings.some((f) =>
        (f.area === "screening" || f.area === "sandbox") && f.level === "problem"
      );
      setExit(refused ? Exit.refused : report.verdict === "healthy" ? Exit.ok : Exit.problems);
    });
}
