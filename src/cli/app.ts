/**
 * The command-line app: one commander program, one file per command under `src/cli/`. Commands
 * return an exit code; errors they throw are rendered here as `error: …` lines. `src/main.ts`
 * does the exiting.
 */
import process from "node:process";
import { Command, CommanderError } from "@commander-js/extra-typings";
import { HermitError, messageOf } from "../errors.ts";
import { VERSION } from "../version.ts";
import { registerCheck } from "./check.ts";
import { registerInit } from "./init.ts";
import { writeErr, writeOut } from "./output.ts";
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
    .configureOutput({ writeOut: (s) => void writeOut(s), writeErr })
    .showSuggestionAfterError(true)
    .addHelpText(
      "after",
      "\nExit codes: 0 ok, 1 unexpected, 2 usage or invalid input, 3 check found problems,\n" +
        "4 refused by policy, 5 no service running.\nDocs: README.md in the hermit repository.",
    );
  registerInit(program, setExit);
  registerCheck(program, setExit);
  registerWatchdog(program, setExit);
  return program;
}

export async function runCli(argv: string[]): Promise<number> {
  let code = 0;
  const program = buildProgram((c) => {
    code = c;
  });
  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (err) {
    code = exitCodeFor(err);
  }
  await writeOut("");
  return code;
}

function exitCodeFor(err: unknown): number {
  if (err instanceof CommanderError) {
    // commander has already printed its message (or the help text)
    if (err.code === "commander.helpDisplayed" || err.code === "commander.version") return 0;
    return 2;
  }
  if (err instanceof HermitError) {
    for (const line of err.message.split("\n")) writeErr(`error: ${line}\n`);
    return err.exitCode;
  }
  writeErr(`error: unexpected: ${messageOf(err)}\n`);
  if (process.env.HERMIT_LOG === "debug" && err instanceof Error && err.stack) writeErr(err.stack + "\n");
  return 1;
}
