/**
 * The parts of `--help` that commander does not write: each command's examples, and the pointer
 * to the docs. Examples are real command lines a newcomer can paste (after `hermit init
 * my-tools`), with a `# comment` aligned after them.
 */
import { DOCS_URL } from "../docs.ts";

/** Help text for after a command's options: `Examples:` and the lines, comments aligned. */
export function examples(...lines: [command: string, comment?: string][]): string {
  const width = Math.max(...lines.map(([c]) => c.length));
  const shown = lines.map(([c, comment]) => `  ${comment ? `${c.padEnd(width)}  # ${comment}` : c}`);
  return `\nExamples:\n${shown.join("\n")}`;
}

export const MAIN_HELP_FOOTER =
  "\nExit codes: 0 ok, 1 unexpected, 2 usage or invalid input, 3 check found problems,\n" +
  `4 refused by policy, 5 no service running.\nDocs: ${DOCS_URL}`;

/** What follows "unknown command 'x'" (and commander's "Did you mean …?" when it has one). */
export const UNKNOWN_COMMAND_HINT = "'hermit --help' lists the commands";
