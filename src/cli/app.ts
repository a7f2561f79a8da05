/**
 * The command-line app: one commander program, one file per command under `src/cli/`. Commands
 * return an exit code; errors they throw are rendered here as `error: …` lines. `src/main.ts`
 * does the exiting.
 */
import { Command, CommanderError } from "@commander-js/extra-typings";
import { errorReport, HermitError } from "../errors.ts";
import { log } from "../log.ts";
import { VERSION } from "../version.ts";
import { registerCall } from "./call.ts";
import { registerCheck } from "./check.ts";
import { registerConvert, registerDeploy } from "./deploy.ts";
import { registerInit } from "./init.ts";
import { registerLogin, registerLogout } from "./login.ts";
import { writeErr, writeOut } from "./output.ts";
import { registerServe } from "./serve.ts";
import { registerStatus } from "./status.ts";
import { registerTools } from "./tools.ts";
import { registerWatchdog } from "./watchdog.ts";

export type SetExit = (code: number) => void;

function buildProgram(setExit: SetExit): Command {
  const program = new Command("hermit")
    .description("Turn a directory (an adapter) into MCP tools any agent host can use, and run them safely.")
    .version(`hermit ${VERSION}`, "-V, --version", "print the version")
    .helpOption("-h, --help", "show help")
    .helpCommand("help [command]", "show help for a command")
    .enablePositionalOptions()
    .exitOverride()
    .configureOutput({ writeOut: (s) => void writeOut(s), writeErr })
    .showSuggestionAfterError(true)
    .addHelpText(
      "after",
      "\nExit codes: 0 ok, 1 unexpected, 2 usage or invalid input, 3 check found problems,\n" +
        "4 refused by policy, 5 no service running.\nDocs: README.md in the hermit repository.",
    );
  registerInit(program, setExit);
  registerCheck(program, setExit);
  registerServe(program, setExit);
  registerTools(program, setExit);
  registerCall(program, setExit);
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
  try {
    await program.parseAsync(helpAsFlag(program, argv), { from: "user" });
  } catch (err) {
    code = exitCodeFor(err);
  }
  await writeOut("");
  return code;
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

function exitCodeFor(err: unknown): number {
  if (err instanceof CommanderError) {
    // commander has already printed its message (or the help text). It exits 0 for --help,
    // --version and `help`, 1 for usage errors and for the help it shows when no command is given.
    return err.exitCode === 0 ? 0 : 2;
  }
  const { text, code } = errorReport(err);
  writeErr(text);
  if (!(err instanceof HermitError) && log.enabled("debug") && err instanceof Error && err.stack) {
    writeErr(err.stack + "\n");
  }
  return code;
}
