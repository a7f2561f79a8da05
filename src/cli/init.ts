/** `hermit init [DIR]`: write a new adapter. */
import type { Command } from "@commander-js/extra-typings";
import process from "node:process";
import { scaffoldAdapter } from "../adapter/scaffold.ts";
import { displayPath } from "../manifest/load.ts";
import type { SetExit } from "./app.ts";
import { printJson, writeOut } from "./output.ts";

export function registerInit(program: Command, setExit: SetExit): void {
  program.command("init")
    .description("create a new adapter with one working command tool")
    .argument("[dir]", "directory to create the adapter in", ".")
    .option("--json", "print the result as JSON")
    .action(async (dir, opts) => {
      const result = scaffoldAdapter(dir, process.platform);
      if (opts.json) await printJson(result);
      else {
        const shown = displayPath(result.dir) || ".";
        await writeOut(
          `created adapter '${result.name}' in ${shown}: ${result.files.join(", ")}\n` +
            `next: hermit check ${shown}\n`,
        );
      }
      setExit(0);
    });
}
