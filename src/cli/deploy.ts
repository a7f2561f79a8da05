/**
 * `hermit deploy DIR [PROJECT]` (into a project) and `hermit convert DIR` (into the user's own
 * configuration): the adapter's MCP entry, context, skills and roles, written into each host's
 * files in the host's own format. `--dry-run` shows the diff, `--remove` undoes exactly what was
 * written (by the adapter's name on record when its directory is gone), `--force` replaces an
 * entry hermit did not write. Exit 0 ok, 2 bad input or a conflict,
 * 4 refused by screening (nothing written).
 */
import type { Command } from "@commander-js/extra-typings";
import path from "node:path";
import process from "node:process";
import { homeDir } from "../platform/paths.ts";
import { Exit, usageError } from "../errors.ts";
import type { Scope } from "../hosts/types.ts";
import type { SetExit } from "./app.ts";
import { examples } from "./help.ts";
import { printJson, writeOut } from "./output.ts";

const HOSTS_HELP =
  "claude, codex, hermes, pi, opencode, cursor, gemini, vscode, or all (those configured here)";

const DIR_HELP =
  "the adapter directory; for --remove, once it is gone, the name it was deployed under (or its old path)";

interface Flags {
  host?: string[];
  serveUrl?: string;
  dryRun?: boolean;
  remove?: boolean;
  force?: boolean;
  json?: boolean;
}

function withFlags(cmd: Command, name: "deploy" | "convert") {
  return cmd
    .option("--host <hosts...>", `the hosts (several, or comma-separated): ${HOSTS_HELP}`)
    .option(
      "--serve-url <url>",
      "point hosts at a running service (hermit serve --standalone) instead of starting hermit",
    )
    .option("--dry-run", "show the changes as a diff; write nothing")
    .option("--remove", `undo what ${name} wrote (every host on record when --host is not given)`)
    .option(
      "--force",
      "replace an entry of the same name that hermit did not write (or that was changed since)",
    )
    .option("--json", "print the report as JSON");
}

async function run(dir: string, scope: Scope, project: string | undefined, flags: Flags, setExit: SetExit) {
  if (!flags.remove && !flags.host?.length) throw usageError(`--host is required: ${HOSTS_HELP}`);
  if (flags.remove && flags.serveUrl) throw usageError("--remove and --serve-url exclude each other");
  const { homeOf } = await import("../hosts/paths.ts");
  const { runDeploy } = await import("../deploy/run.ts");
  const { renderReport } = await import("../deploy/report.ts");
  const { selfCommand } = await import("../platform/runtime.ts");
  const home = homeOf(process.platform, process.env, homeDir());
  const report = await runDeploy({
    adapter: dir,
    scope,
    project,
    hosts: flags.host ?? [],
    serveUrl: flags.serveUrl,
    dryRun: flags.dryRun === true,
    remove: flags.remove === true,
    force: flags.force === true,
    platform: process.platform,
    env: process.env,
    home,
    self: selfCommand(),
  });
  if (flags.json) await printJson(report);
  else await writeOut(renderReport(report));
  setExit(Exit.ok);
}

export function registerDeploy(program: Command, setExit: SetExit): void {
  const cmd = program.command("deploy")
    .description("deploy an adapter into a project: each host's MCP config, context, skills and roles")
    .argument("<dir>", DIR_HELP)
    .argument("[project]", "the project directory", ".")
    .addHelpText(
      "after",
      examples(
        ["hermit deploy my-tools . --host claude,codex", "into this project, for Claude Code and Codex"],
        [
          "hermit deploy my-tools . --remove",
          "undo it, byte for byte (by the name on record once the directory is gone)",
        ],
      ),
    );
  withFlags(cmd as unknown as Command, "deploy").action(async (...args: unknown[]) => {
    const [dir, project, flags] = args as [string, string, Flags];
    const abs = path.resolve(project);
    const { isDir } = await import("../adapter/content.ts");
    if (!isDir(abs)) throw usageError(`${project}: no such project directory`);
    await run(dir, "project", abs, flags, setExit);
  });
}

export function registerConvert(program: Command, setExit: SetExit): void {
  const cmd = program.command("convert")
    .description("convert an adapter into the user's own host configuration (every project sees it)")
    .argument("<dir>", DIR_HELP)
    .addHelpText(
      "after",
      examples(
        ["hermit convert my-tools --host hermes", "into your own Hermes config (every project)"],
        [
          "hermit convert my-tools --remove --host hermes",
          "undo it (by the name on record once the directory is gone)",
        ],
      ),
    );
  withFlags(cmd as unknown as Command, "convert").action(async (...args: unknown[]) => {
    const [dir, flags] = args as [string, Flags];
    await run(dir, "user", undefined, flags, setExit);
  });
}
