/**
 * `hermit catalog [NAME]`: the vetted MCP servers shipped inside hermit — per entry its pinned
 * package, trust tier, tools (which only read, which `hermit add` exports by default), the
 * environment it needs and its sandbox policy.
 */
import type { Command } from "@commander-js/extra-typings";
import { findEntry, policyJson } from "../catalog/add.ts";
import { CATALOG, type CatalogEntry } from "../catalog/entries.ts";
import { Exit } from "../errors.ts";
import type { SetExit } from "./app.ts";
import { printJson, writeOut } from "./output.ts";

export function registerCatalog(program: Command, setExit: SetExit): void {
  program.command("catalog")
    .description("list the vetted MCP servers 'hermit add' can add, or show one")
    .argument("[name]", "one entry, in full")
    .option("--json", "print the entries as JSON")
    .addHelpText(
      "after",
      "\nExamples:\n  hermit catalog                 # every entry: version, trust, tools\n" +
        "  hermit catalog filesystem      # its tools, read-only ones, environment and sandbox policy\n",
    )
    .action(async (name, opts) => {
      const entries = name ? [findEntry(name)] : [...CATALOG];
      if (opts.json) await printJson(name ? entries[0] : entries);
      else await writeOut(name ? describe(entries[0]) : table(entries));
      setExit(Exit.ok);
    });
}

function table(entries: CatalogEntry[]): string {
  const rows = entries.map((e) =>
    `${e.name.padEnd(20)} ${e.version.padEnd(10)} ${e.trust.padEnd(9)} ${
      String(e.tools.length).padStart(5)
    }  ${e.summary}`
  );
  return [`${"NAME".padEnd(20)} ${"VERSION".padEnd(10)} ${"TRUST".padEnd(9)} TOOLS  SUMMARY`, ...rows].join(
    "\n",
  ) +
    "\n\nShow one: hermit catalog NAME    Add one: hermit add DIR NAME\n";
}

function describe(e: CatalogEntry): string {
  const ro = new Set(e.readOnly);
  const inc = new Set(e.include);
  const policy = JSON.stringify(policyJson(e.sandbox));
  return [
    `${e.name}: ${e.summary}`,
    `  package:  ${e.package}@${e.version} (npx)`,
    `  trust:    ${e.trust}`,
    `  tools:    ${e.tools.length} (r = read-only, + = exported by default)`,
    ...e.tools.map((t) => `    ${ro.has(t) ? "r" : " "} ${inc.has(t) ? "+" : " "} ${t}`),
    ...(e.args.length
      ? [`  args:     ${e.args.join(" ")}  ({root}: --root, default \${workspaceFolder})`]
      : []),
    ...Object.entries(e.env).map(([k, v]) => `  env:      ${k}=${v}`),
    ...Object.entries(e.optionalEnv ?? {}).map(([k, v]) => `  optional: ${k}: ${v}`),
    `  sandbox:  ${policy}`,
    `  notes:    ${e.notes}`,
    `  add it:   hermit add DIR ${e.name}${
      e.args.some((a) => a.includes("{root}")) ? " [--root DIR]" : ""
    } [--tools a,b] [--as NAME]`,
  ].join("\n") + "\n";
}
