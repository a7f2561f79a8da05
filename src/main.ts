/**
 * Entry point and the only place that exits. Four answers come before anything heavy is loaded:
 * the sandbox launcher (`__sandbox`, run before every confined child), `--version`, the watchdog
 * supervisor hermit starts for itself (`watchdog --ppid N --supervise`, one per running hermit, so
 * it should cost as little memory as it can), and the relay a host starts per session for a
 * standalone adapter (`serve DIR`, `src/relay/main.ts`).
 * Everything else goes to the command-line app, whose commands load what they need.
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
  // a relay (`serve DIR` of a standalone adapter) runs once per host session: it loads only what it needs
  const relayed = argv[0] === "serve"
    ? await (await import("./relay/main.ts")).relayFastPath(argv.slice(1))
    : undefined;
  if (relayed !== undefined) process.exit(relayed);
  const { runCli } = await import("./cli/app.ts");
  const code = await runCli(argv);
  process.exit(code);
}
