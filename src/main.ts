/**
 * Entry point and the only place that exits. Five answers come before anything heavy is loaded:
 * the sandbox launcher (`__sandbox`, run before every confined child); `--version`; hermit's own
 * watchdog supervisor (`watchdog --ppid N --supervise`, where no sh can be the watchdog); the relay
 * a host starts per session for a standalone adapter (`serve DIR`, `src/relay/main.ts`); and
 * `serve [DIR]` without options for a session adapter, which loads only what serving needs.
 * Everything else goes to the command-line app, whose commands load what they need. The binary is
 * built with code splitting, so what is not imported is not loaded.
 */
import process from "node:process";
import { VERSION } from "./version.ts";

const argv = process.argv.slice(2);

if (argv[0] === "__sandbox") {
  // The sandbox launcher: confine this thread, then become the target (see sandbox/launcher.ts).
  const { runLauncher } = await import("./sandbox/launcher.ts");
  process.exit(runLauncher(argv.slice(1)));
} else if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) {
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
} else {
  // `serve …`, what a host runs at every session start: a relay (a standalone adapter whose manifest
  // copy is known) loads only what relaying needs; `serve [DIR]` otherwise skips the command-line app
  const relayed = argv[0] === "serve"
    ? await (await import("./relay/main.ts")).relayFastPath(argv.slice(1))
    : undefined;
  if (relayed !== undefined) process.exit(relayed);
  if (argv[0] === "serve" && argv.length <= 2 && !argv[1]?.startsWith("-")) {
    const { serveDir } = await import("./cli/serve_adapter.ts");
    process.exit(await serveDir(argv[1] ?? "."));
  }
  const { runCli } = await import("./cli/app.ts");
  const code = await runCli(argv);
  process.exit(code);
}
