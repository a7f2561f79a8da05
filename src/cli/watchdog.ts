/**
 * `hermit watchdog --ppid N [--grace S] [--poll S] -- CMD…`: run CMD in its own group and reap
 * the group when N dies or the watchdog is signalled; exit with CMD's status. The hidden
 * `--supervise` mode (no CMD) reaps the groups registered on stdin instead: `hermit serve` runs
 * one (src/process/supervisor.ts). Usage errors exit 2.
 */
import { type Command, Option } from "@commander-js/extra-typings";
import { usageError } from "../errors.ts";
import { runWatchdog, WATCHDOG_DEFAULTS } from "../process/watchdog_run.ts";
import type { SetExit } from "./app.ts";
import { examples } from "./help.ts";
import { positiveSeconds } from "./options.ts";

export function registerWatchdog(program: Command, setExit: SetExit): void {
  program.command("watchdog")
    .description(
      "run CMD in its own process group; when process N dies, SIGTERM the group, then SIGKILL after the grace period",
    )
    .addHelpText(
      "after",
      examples(
        ["hermit watchdog --ppid $$ -- npx -y @modelcontextprotocol/server-memory", "stops with this shell"],
      ),
    )
    .usage("--ppid N [--grace S] [--poll S] -- CMD [ARGS…]")
    .requiredOption("--ppid <pid>", "the process to watch", (v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n <= 0) throw usageError(`--ppid must be a process id, got '${v}'`);
      return n;
    })
    .option(
      "--grace <seconds>",
      "from SIGTERM to SIGKILL",
      positiveSeconds("--grace"),
      WATCHDOG_DEFAULTS.graceMs / 1000,
    )
    .option(
      "--poll <seconds>",
      "how often the parent is checked",
      positiveSeconds("--poll"),
      WATCHDOG_DEFAULTS.pollMs / 1000,
    )
    .addOption(
      new Option("--supervise", "own the groups registered on stdin (used by hermit itself)").hideHelp(),
    )
    .addOption(
      new Option(
        "--tag <prefix>",
        "also stop, at the end, the groups whose processes carry hermit's group tag",
      )
        .hideHelp(),
    )
    .argument("[command...]", "the command to run, after --")
    .passThroughOptions()
    .action(async (command, opts) => {
      if (!opts.supervise && command.length === 0) {
        throw usageError("watchdog needs a command after --, e.g. hermit watchdog --ppid 123 -- sleep 10");
      }
      if (opts.supervise && command.length > 0) throw usageError("watchdog --supervise takes no command");
      setExit(
        await runWatchdog({
          ppid: opts.ppid,
          command: opts.supervise ? undefined : command,
          graceMs: opts.grace * 1000,
          pollMs: opts.poll * 1000,
          tag: opts.supervise ? opts.tag : undefined,
        }),
      );
    });
}
