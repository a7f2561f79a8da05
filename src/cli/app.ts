/**
 * The command-line app: one commander program, one file per command under `src/cli/`. Commands
 * return an exit code; errors they throw are rendered here as `error: …` lines. `src/main.ts`
 * does the exiting.
 */
import { Command, CommanderError } from "@commander-js/extra-typings";
import { errorReport, HermitError, messageOf } from "../errors.ts";
import { log } from "../log.ts";
import { VERSION } from "../version.ts";
import { registerAdd } from "./add.ts";
import { registerCall } from "./call.ts";
import { registerCatalog } from "./catalog.ts";
import { registerCheck } from "./check.ts";
import { registerConvert, registerDeploy } from "./deploy.ts";
import { registerInit } from "./init.ts";
import { registerLock } from "./lock.ts";
import { registerLogin, registerLogout } from "./login.ts";
import { MAIN_HELP_FOOTER, UNKNOWN_COMMAND_HINT } from "./help.ts";
import { printJson, writeErr, writeOut } from "./output.ts";
import { registerServe } from "./serve.ts";
import { registerStatus } from "./status.ts";
import { registerTools } from "./tools.ts";
import { registerWatchdog } from "./watchdog.ts";

export type SetExit = (code: number) => void;

export function buildProgram(setExit: SetExit): Command {
  const program = new Command("hermit")
    .description("Turn a directory (an adapter) into MCP tools any agent host can use, and run them safely.")
    .version(`hermit ${VERSION}`, "-V, --version", "print the version")
    .helpOption("-h, --help", "show help")
    .helpCommand("help [command]", "show help for a command")
    .enablePositionalOptions()
    .exitOverride()
    // commander's error lines are written by exitCodeFor (with a pointer to the help where it helps)
    .configureOutput({ writeOut: (s) => void writeOut(s), writeErr, outputError: () => {} })
    .showSuggestionAfterError(true)
    .addHelpText("after", MAIN_HELP_FOOTER);
  registerInit(program, setExit);
  registerCheck(program, setExit);
  registerServe(program, setExit);
  registerTools(program, setExit);
  registerCall(program, setExit);
  registerLock(program, setExit);
  registerCatalog(program, setExit);
  registerAdd(program, setExit);
  registerStatus(program, setExit);
  registerLogin(program, setExit);
  registerLogout(program, setExit);
  registerDeploy(program, setExit);
  registerConvert(program, setExit);
  registerWatchdog(program, setExit);
  return program;
}

export async function runCli(argv: string[]): Promise<number> {
  let code = 0;
  const program = buildProgram((c) => {
    code = c;
  });
  // Whether the command that runs was asked for JSON: then its errors are JSON on stdout too.
  // Before commander has picked the command (a usage error), the word on the command line decides.
  const end = argv.indexOf("--");
  let json = (end < 0 ? argv : argv.slice(0, end)).includes("--json");
  program.hook("preAction", (_program, action) => {
    json = action.opts().json === true;
  });
  try {
    await program.parseAsync(helpAsFlag(program, argv), { from: "user" });
  } catch (err) {
    code = exitCodeFor(err);
    const error = json && code !== 0 ? errorObject(err, code) : undefined;
    if (error) await printJson({ error });
  }
  await writeOut("");
  return code;
}

/** An error as JSON for `--json` callers: the message as the stderr line says it, the exit code, located issues. */
function errorObject(err: unknown, code: number): Record<string, unknown> | undefined {
  if (err instanceof CommanderError) {
    if (err.code === "commander.help" || err.code === "commander.helpDisplayed") return undefined;
    return { message: commanderMessage(err).replace(/^error: /, ""), exit_code: code };
  }
  if (!(err instanceof HermitError)) return { message: `unexpected: ${messageOf(err)}`, exit_code: code };
  // a manifest error carries its issues located (file, line, col, path, message)
  const issues = (err as { issues?: unknown }).issues;
  return { message: err.message, exit_code: code, ...(Array.isArray(issues) ? { issues } : {}) };
}

/**
 * `hermit help [CMD]` as `hermit [CMD] --help`, so that asking for help always succeeds (commander
 * would exit 1 for `help` and print the whole help to stderr for `help bogus`) and an unknown CMD
 * gets the same "unknown command … (Did you mean …?)" as `hermit bogus`.
 */
function helpAsFlag(program: Command, argv: string[]): string[] {
  if (argv[0] !== "help") return argv;
  const target = argv[1];
  if (target === undefined || target.startsWith("-") || target === "help") return ["--help"];
  if (program.commands.some((c) => c.name() === target || c.aliases().includes(target))) {
    return [target, "--help"];
  }
  return [target];
}

/** commander's error message, an unknown command's pointing at the help. */
function commanderMessage(err: CommanderError): string {
  if (err.code !== "commander.unknownCommand") return err.message;
  const [first, ...rest] = err.message.split("\n");
  return [`${first}; ${UNKNOWN_COMMAND_HINT}`, ...rest].join("\n");
}

function exitCodeFor(err: unknown): number {
  if (err instanceof CommanderError) {
    // commander has already printed the help text, where it showed one. It exits 0 for --help,
    // --version and `help`, 1 for usage errors and for the help it shows when no command is given.
    if (err.exitCode !== 0 && err.code !== "commander.help") writeErr(`${commanderMessage(err)}\n`);
    return err.exitCode === 0 ? 0 : 2;
  }
  const { text, code } = errorReport(err);
  writeErr(text);
  if (!(err instanceof HermitError) && log.enabled("debug") && err instanceof Error && err.stack) {
    writeErr(err.stack + "\n");
  }
  return code;
}
