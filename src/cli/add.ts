/**
 * `hermit add DIR NAME`: add a catalog entry to an adapter — spliced into hermit.yaml with its
 * comments kept, its tools appended to exports.tools — then start it once (its package fetched into
 * npm's cache first when it runs without a network, `catalog/warm.ts`) from the planned manifest
 * and, once it ran, write hermit.yaml and its entry in hermit.lock (the whole lock when there was
 * none). If it does not start, hermit.yaml is never touched. The entry is added to hermit.yaml and
 * hermit.lock as they are when it is written, so an add or an edit that landed meanwhile is kept
 * (`lock/commit.ts`). A hermit.lock that is there but cannot be used is refused before anything
 * runs or is written. Exit 0 added, 2 bad input or a name in the way, 3 it did not start or the
 * lock cannot be used, 4 refused.
 */
import { type Command, Option } from "@commander-js/extra-typings";
import { readFileSync, realpathSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { findEntry, planAdd } from "../catalog/add.ts";
import { Exit, usageError } from "../errors.ts";
import { setLogLevel } from "../log.ts";
import { displayPath, resolveManifestPath } from "../manifest/load.ts";
import { writeFileAtomic } from "../platform/atomic_write.ts";
import { own } from "../platform/own.ts";
import { shellQuote } from "../platform/shell_quote.ts";
import type { SetExit } from "./app.ts";
import { printJson, writeOut } from "./output.ts";

const list = (v: string) => v.split(",").map((s) => s.trim()).filter(Boolean);

export function registerAdd(program: Command, setExit: SetExit): void {
  program.command("add")
    .description("add a server from the vetted catalog to an adapter, start it once and lock it")
    .argument("<dir>", "the adapter directory")
    .argument("<name>", "the catalog entry ('hermit catalog' lists them)")
    .option("--as <server>", "the mcp_servers key (default: the entry's name)")
    .option(
      "--tools <names>",
      "the tools to export, comma-separated (default: the entry's include list)",
      list,
    )
    .addOption(
      new Option("--trust <tier>", "override the entry's trust tier").choices(["full", "untrusted"] as const),
    )
    .option("--prefix <prefix>", "export its tools under this prefix (when names are taken)")
    .option("--root <dir>", "the directory a filesystem-like entry works in (default: the workspace)")
    .option("--json", "print the result as JSON")
    .option("-v, --verbose", "show the server's stderr")
    .addHelpText(
      "after",
      "\nExamples:\n  hermit add my-tools memory                                # the knowledge-graph server, all its tools\n" +
        "  hermit add my-tools filesystem --root ./docs --tools read_text_file,search_files\n",
    )
    .action(async (dir, name, opts) => {
      if (!opts.verbose) setLogLevel("warn");
      const entry = findEntry(name);
      const { file: given, dir: adapterDir } = resolveManifestPath(dir);
      let file: string;
      let before: string;
      try {
        file = realpathSync(given);
        before = readFileSync(file, "utf8");
      } catch {
        throw usageError(
          `${displayPath(given)}: not found; create an adapter first with 'hermit init ${
            shellQuote(displayPath(adapterDir))
          }'`,
        );
      }
      const root = opts.root && !opts.root.includes("${") ? path.resolve(opts.root) : opts.root;
      const plan = planAdd(before, given, adapterDir, entry, { ...opts, root });
      const shown = shellQuote(adapterDir === process.cwd() ? "." : displayPath(adapterDir));
      const { lockPath, lockText, readLockState, writeLock } = await import("../lock/file.ts");
      const { lockWithServer, readAtWrite, refuseUnusableLock, whileWriting } = await import(
        "../lock/commit.ts"
      );
      // a lock that is there but cannot be used is never replaced by a lock of every server
      const lockShown = displayPath(lockPath(adapterDir));
      const lockCmd = `hermit lock ${shown}`;
      const first = readLockState(adapterDir);
      refuseUnusableLock(first, lockShown, lockCmd);
      // confined without a network, npx answers from npm's cache only: fill it first
      const { needsWarmCache, warmNpmCache } = await import("../catalog/warm.ts");
      const warm = needsWarmCache(entry) ? await warmNpmCache(entry) : undefined;
      const { collectLock } = await import("../lock/run.ts");
      const { renderLockRun, lockRunJson } = await import("../lock/report.ts");
      const m = plan.loaded!.manifest;
      // started from the planned manifest in memory: hermit.yaml is written only once it ran, so
      // nothing (a failed start, a kill -9 during the download) leaves it half-changed
      const run = await collectLock(m, {
        versions: "manifest",
        only: first.kind === "ok" ? [plan.server] : undefined,
        verbose: opts.verbose,
      });
      const added = own(run.next.servers, plan.server)?.tools ?? {};
      const absent = (opts.tools ?? entry.include).filter((t) => !Object.hasOwn(added, t));
      if (run.failures.length || absent.length) {
        const why = run.failures.map((f) => `mcp_servers.${f.server} did not start: ${f.why}`);
        if (warm && run.failures.length) why.push(warm);
        if (absent.length && !run.failures.length) why.push(`the server does not offer ${absent.join(", ")}`);
        await writeOut(
          `hermit add: ${entry.name}: ${why.join("; ")}\nnothing changed: hermit.yaml is as it was\n`,
        );
        return setExit(Exit.problems);
      }
      await whileWriting(() => {
        // what the files are now: another add or an edit may have landed while the entry ran
        const now = readAtWrite(file, displayPath(given));
        // (the same entry and options: only a name taken meanwhile can make it fail now)
        const final = now === before ? plan : planAdd(now, given, adapterDir, entry, { ...opts, root });
        // the lock too, and both checked before either is written
        const lockNow = readLockState(adapterDir);
        refuseUnusableLock(lockNow, lockShown, lockCmd);
        const text = lockText(lockWithServer(lockNow, run.next, plan.server));
        writeFileAtomic(file, final.text, { preserve: true });
        writeLock(adapterDir, text);
      });
      if (opts.json) {
        await printJson({
          added: plan.server,
          package: `${entry.package}@${entry.version}`,
          exported: plan.exported,
          trust: opts.trust ?? entry.trust,
          sandbox: { policy: plan.sandbox, written: plan.sandboxWritten },
          lock: lockRunJson(m, run, "written"),
        });
      } else {
        await writeOut(
          [
            `added mcp_servers.${plan.server} (${entry.package}@${entry.version}, trust ${
              opts.trust ?? entry.trust
            }) to ${displayPath(given)}`,
            `exports.tools += ${plan.exported.join(", ")}`,
            plan.sandboxWritten
              ? `sandbox: ${JSON.stringify(plan.sandbox)}`
              : `sandbox policy (not written: this hermit has no sandbox: key yet): ${
                JSON.stringify(plan.sandbox)
              }`,
            renderLockRun(m, run, "written", shown).trimEnd(),
          ].join("\n") + "\n",
        );
      }
      setExit(Exit.ok);
    });
}
