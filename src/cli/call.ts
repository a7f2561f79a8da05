/**
 * `hermit call DIR TOOL --args JSON`: one call through exactly the path a host's call takes.
 * Approvals are asked at the terminal. Exit 0 on success, 1 when the tool reports an error, 2 for
 * bad input, 4 when a policy refused the call.
 */
import type { Command } from "@commander-js/extra-typings";
import { Exit, usageError } from "../errors.ts";
import { omitEvents, setLogLevel } from "../log.ts";
import { loadManifest } from "../manifest/load.ts";
import type { SetExit } from "./app.ts";
import { examples } from "./help.ts";
import { printJson, writeOut } from "./output.ts";
import { ttyAvailable, ttyElicit } from "./tty_prompt.ts";

function parseArgs(text: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw usageError(`--args is not valid JSON (${(err as Error).message}); e.g. --args '{"text": "hi"}'`);
  }
  if (!v || typeof v !== "object" || Array.isArray(v)) {
    throw usageError(`--args must be a JSON object, e.g. --args '{"text": "hi"}'`);
  }
  return v as Record<string, unknown>;
}

export function registerCall(program: Command, setExit: SetExit): void {
  program.command("call")
    .description("call one tool through the whole gate stack, as a host would")
    .addHelpText(
      "after",
      examples(
        [`hermit call my-tools hello --args '{"name": "Ada"}'`],
        ["hermit call my-tools hello --json", "the raw MCP result"],
      ),
    )
    .argument("<dir>", "the adapter directory")
    .argument("<tool>", "the exported tool name")
    .option("--args <json>", "the arguments as a JSON object", "{}")
    .option("--json", "print the raw MCP result as JSON")
    .option("-v, --verbose", "show upstream servers' stderr")
    .action(async (dir, tool, opts) => {
      if (!opts.verbose) setLogLevel("warn");
      omitEvents(["upstream-failed", "not-served"]); // a tool that cannot run says why in its error
      const args = parseArgs(opts.args);
      const manifest = loadManifest(dir);
      const { callOnce } = await import("../mcp/diagnostics.ts");
      const { result, refused } = await callOnce(manifest, tool, args, {
        verbose: opts.verbose,
        elicit: ttyAvailable() ? ttyElicit : undefined,
      });
      if (opts.json) await printJson(result);
      else {
        const blocks = (result.content as { type: string; text?: string }[]) ?? [];
        const text = blocks.map((b) => b.type === "text" ? b.text : JSON.stringify(b)).join("\n");
        await writeOut(text + (text.endsWith("\n") ? "" : "\n")); // at a terminal, shown escaped
      }
      setExit(refused ? Exit.refused : result.isError ? Exit.unexpected : Exit.ok);
    });
}
