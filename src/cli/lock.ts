/**
 * `hermit lock DIR`: start the adapter's upstream servers for real and write `hermit.lock` — the
 * package versions that ran and every exported tool's definition — printing what changed since
 * the last lock and the description-scan findings of the new text. `--check` (CI) writes nothing
 * and exits 3 when the lock is out of date. Exit 0 written or up to date, 2 bad input, 3 out of
 * date, a server did not start, or hermit.yaml changed while they ran (nothing written), 4
 * refused by screening or safe mode.
 */
import type { Command } from "@commander-js/extra-typings";
import { readFileSync } from "node:fs";
import process from "node:process";
import { Exit, HermitError } from "../errors.ts";
import { setLogLevel } from "../log.ts";
import { displayPath, loadManifest } from "../manifest/load.ts";
import { shellQuote } from "../platform/shell_quote.ts";
import type { SetExit } from "./app.ts";
import { printJson, writeOut } from "./output.ts";

export function registerLock(program: Command, setExit: SetExit): void {
  program.command("lock")
    .description("start the upstream servers and pin their versions and tool definitions in hermit.lock")
    .argument("[dir]", "the adapter directory", ".")
    .option("--check", "write nothing; exit 3 when hermit.lock is out of date (for CI)")
    .option("--json", "print the changes as JSON")
    .option("-v, --verbose", "show upstream servers' stderr")
    .addHelpText(
      "after",
      "\nExamples:\n  hermit lock my-tools            # write or update my-tools/hermit.lock, showing what changed\n" +
        "  hermit lock my-tools --check    # in CI: exit 3 when a server or tool changed since the lock\n",
    )
    .action(async (dir, opts) => {
      if (!opts.verbose) setLogLevel("warn");
      const manifest = loadManifest(dir);
      const text = readFileSync(manifest.file, "utf8");
      const { collectLock } = await import("../lock/run.ts");
      const { lockOutcome, lockRunJson, renderLockRun } = await import("../lock/report.ts");
      const { writeLock } = await import("../lock/file.ts");
      const { readAtWrite, whileWriting } = await import("../lock/commit.ts");
      const run = await collectLock(manifest, { versions: "manifest", verbose: opts.verbose });
      const outcome = lockOutcome(run, opts.check === true);
      if (outcome === "written") {
        await whileWriting(() => {
          // the servers that ran are hermit.yaml's as it was read: an add meanwhile would be dropped
          if (readAtWrite(manifest.file, displayPath(manifest.file)) !== text) {
            throw new HermitError(
              `${
                displayPath(manifest.file)
              } changed while its servers ran; nothing written; run hermit lock again`,
              Exit.problems,
            );
          }
          writeLock(manifest.dir, run.next);
        });
      }
      const shown = shellQuote(manifest.dir === process.cwd() ? "." : displayPath(manifest.dir));
      if (opts.json) await printJson(lockRunJson(manifest, run, outcome));
      else await writeOut(renderLockRun(manifest, run, outcome, shown));
      setExit(outcome === "written" || outcome === "up-to-date" ? Exit.ok : Exit.problems);
    });
}
