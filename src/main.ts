/**
 * Entry point and the only place that exits. `--version` is answered before anything heavy is
 * loaded; everything else goes to the command-line app, whose commands load what they need.
 */
import process from "node:process";
import { VERSION } from "./version.ts";

const argv = process.argv.slice(2);

if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) {
  process.stdout.write(`hermit ${VERSION}\n`);
  process.exit(0);
}

const { runCli } = await import("./cli/app.ts");
const code = await runCli(argv);
process.exit(code);
