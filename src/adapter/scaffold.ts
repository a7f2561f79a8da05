/**
 * `hermit init`: a new adapter with one working command tool, whose `check` passes. Nothing is
 * overwritten: an existing hermit.yaml stops the command before any file is written.
 */
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Exit, HermitError } from "../errors.ts";
import { displayPath, MANIFEST_FILE } from "../manifest/load.ts";

export interface ScaffoldResult {
  dir: string;
  name: string;
  files: string[];
}

/** A valid adapter name from a directory name: lowercase, dashes, never empty. */
export function adapterNameFor(dir: string): string {
  const base = path.basename(path.resolve(dir)).toLowerCase().replace(/[^a-z0-9-]+/g, "-").replace(
    /^-+|-+$/g,
    "",
  );
  return /^[a-z0-9]/.test(base) ? base.slice(0, 64) : "my-adapter";
}

export function scaffoldAdapter(dir: string, platform: NodeJS.Platform): ScaffoldResult {
  const abs = path.resolve(dir);
  if (existsSync(path.join(abs, MANIFEST_FILE))) {
    throw new HermitError(
      `${displayPath(path.join(abs, MANIFEST_FILE))} already exists; nothing was written`,
      Exit.usage,
    );
  }
  const name = adapterNameFor(abs);
  const windows = platform === "win32";
  const script = windows ? "tools/hello.ps1" : "tools/hello.sh";
  const run = windows
    ? `[powershell, -NoProfile, -ExecutionPolicy, Bypass, -File, ${script}]`
    : `[sh, ${script}]`;
  const files: Record<string, string> = {
    [MANIFEST_FILE]: manifestTemplate(name, run),
    "CONTEXT.md": contextTemplate(name),
    [script]: windows ? HELLO_PS1 : HELLO_SH,
  };
  mkdirSync(path.join(abs, "tools"), { recursive: true });
  for (const [rel, text] of Object.entries(files)) {
    writeFileSync(path.join(abs, rel), text, { flag: "wx" });
  }
  if (!windows) chmodSync(path.join(abs, script), 0o755);
  return { dir: abs, name, files: Object.keys(files) };
}

function manifestTemplate(name: string, run: string): string {
  return `# hermit adapter manifest. Reference: the hermit README ("The manifest").
name: ${name}
version: 0.1.0
description: A new hermit adapter

exports:
  tools: [hello]          # exactly the tools this adapter provides
  context: CONTEXT.md     # copied into the host's instructions file by deploy/convert

tools:                    # command tools: argv run per call, arguments as JSON on stdin
  hello:
    description: Say hello to someone
    input:
      type: object
      properties:
        name: { type: string, description: Who to greet }
    run: ${run}
    read_only: true
    timeout: 10

# Upstream MCP servers are re-exported like this (uncomment, then add their tools to exports):
# mcp_servers:
#   memory:
#     command: npx
#     args: [-y, "@modelcontextprotocol/server-memory"]
#     tools: { include: [read_graph] }

serve:
  command: hermit serve .
`;
}

function contextTemplate(name: string): string {
  return `# ${name}

This project uses the \`${name}\` tools (served by hermit). Call \`hello\` with a \`name\` to get a greeting.
`;
}

const HELLO_SH = `#!/bin/sh
# A command tool. hermit writes the call's arguments as JSON on stdin and returns what this prints
# on stdout; a non-zero exit becomes an error result carrying the end of stderr.
input=$(cat)
name=$(printf '%s' "$input" | sed -n 's/.*"name"[[:space:]]*:[[:space:]]*"\\([^"\\\\]*\\)".*/\\1/p')
printf 'Hello, %s!\\n' "\${name:-world}"
`;

const HELLO_PS1 =
  `# A command tool. hermit writes the call's arguments as JSON on stdin and returns what this prints
# on stdout; a non-zero exit becomes an error result carrying the end of stderr.
$in = [Console]::In.ReadToEnd() | ConvertFrom-Json
$name = if ($in.name) { $in.name } else { "world" }
Write-Output "Hello, $name!"
`;
