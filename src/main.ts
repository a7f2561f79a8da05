/**
 * Entry point and the only place that exits. Three answers come before anything heavy is loaded:
 * `--version`; hermit's own watchdog supervisor (`watchdog --ppid N --supervise`, where no sh can
 * be the watchdog); and `serve [DIR]` without options, what a host starts once per session, which
 * loads only what serving needs. Everything else goes to the command-line app, whose commands load
 * what they need. The binary is built with code splitting, so what is not imported is not loaded.
 */
import process from "node:process";
import { VERSION } from "./version.ts";

const argv = process.argv.slice(2);

if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) {
  // Exit once the line is handed to the OS (a pipe may take it asynchronously); a reader that
  // is already gone is not an error.
  process.stdout.on("error", () => process.exit(0));
  process.stdout.write(`hermit ${VERSION}\n`, () => process.exit(0));
} else if (
  argv.length === 4 && argv[0] === "watchdog" && argv[1] === "--ppid" && /^[1-9]\d{0,9}$/.test(argv[2]) &&
  argv[3] === "--supervise"
) {
  const { runWatchdog, WATCHDOG_DEFAULTS } = await import("./process/watchdog_run.ts");
  process.exit(await runWatchdog({ ppid: Number(argv[2]), ...WATCHDOG_DEFAULTS }));
} else if (argv[0] === "serve" && argv.length <= 2 && !argv[1]?.startsWith("-")) {
  // `hermit serve [DIR]`, what a host runs at every session start: no command-line app
  const { serveDir } = await import("./cli/serve_adapter.ts");
  process.exit(await serveDir(argv[1] ?? "."));
} else {
  const { runCli } = await import("./cli/app.ts");
  const code = await runCli(argv);
  process.exit(code);
}
