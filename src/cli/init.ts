/** `hermit init [DIR]`: write a new adapter. */
import type { Command } from "@commander-js/extra-typings";
import process from "node:process";
import { ExistingFilesError, scaffoldAdapter, type ScaffoldResult } from "../adapter/scaffold.ts";
import { HermitError } from "../errors.ts";
import { displayPath, MANIFEST_FILE } from "../manifest/load.ts";
import { shellQuote } from "../platform/shell_quote.ts";
import type { SetExit } from "./app.ts";
import { examples } from "./help.ts";
import { printJson, writeOut } from "./output.ts";

export function registerInit(program: Command, setExit: SetExit): void {
  program.command("init")
    .description("create a new adapter with one working command tool")
    .addHelpText(
      "after",
      examples(
        ["hermit init my-tools", "a new adapter in ./my-tools"],
        ["hermit init", "make the current directory an adapter"],
      ),
    )
    .argument("[dir]", "directory to create the adapter in", ".")
    .option("--json", "print the result as JSON")
    .action(async (dir, opts) => {
      const result = scaffold(dir);
      if (opts.json) await printJson(result);
      else {
        const shown = result.dir === process.cwd() ? "." : displayPath(result.dir);
        await writeOut(
          `created adapter '${result.name}' in ${shown}: ${result.files.join(", ")}\n` +
            `next: hermit check ${shellQuote(shown)}\n` +
            `then: hermit deploy ${
              shellQuote(shown)
            } . --host claude (or codex, cursor, …; all: every host set up here)\n`,
        );
      }
      setExit(0);
    });
}

function scaffold(dir: string): ScaffoldResult {
  try {
    return scaffoldAdapter(dir, process.platform);
  } catch (err) {
    if (!(err instanceof ExistingFilesError)) throw err;
    const where = err.dir === process.cwd() ? "." : displayPath(err.dir);
    const hint = err.files.includes(MANIFEST_FILE)
      ? `${where} is already an adapter, check it with: hermit check ${shellQuote(where)}`
      : `init makes a new adapter: move ${
        err.files.length === 1 ? "it" : "them"
      } aside or pick another directory`;
    throw new HermitError(`${err.message}; ${hint}`, err.exitCode);
  }
}
