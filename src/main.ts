/**
 * Entry point and the only place that exits. `--version` is answered before anything heavy is
 * loaded; everything else goes to the command-line app, whose commands load what they need.
 */
import process from "node:process";
import { VERSION } from "./version.ts";

const argv = process.argv.slice(2);

if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) {
  // Exit once the line is handed to the OS (a pipe may take it asynchronously); a reader that
  // is already gone is not an error.
  process.stdout.on("error", () => process.exit(0));
  process.stdout.write(`hermit ${VERSION}\n`, () => process.exit(0));
} else {
  const { runCli } = await import("./cli/app.ts");
  const code = await runCli(argv);
  process.exit(code);
}
