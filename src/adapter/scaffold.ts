/**
 * `hermit init`: a new adapter with one working command tool, whose `check` passes. Nothing is
 * overwritten: if any file init would write already exists, the command stops before writing
 * anything; if writing fails half-way, what was written is removed again.
 */
import { chmodSync, lstatSync, mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import { Exit, HermitError } from "../errors.ts";
import { strictestNameBudget } from "../hosts/index.ts";
import { displayPath, MANIFEST_FILE } from "../manifest/load.ts";
import { docsSection } from "../docs.ts";

export interface ScaffoldResult {
  dir: string;
  name: string;
  files: string[];
}

/**
 * Longest derived name: keeps `mcp__<name>__hello` within the strictest host budget (Cursor's 60),
 * so a fresh adapter checks without warnings.
 */
const MAX_DERIVED_NAME = strictestNameBudget() - "mcp____hello".length;

/** A valid adapter name from a directory name: lowercase ASCII, dashes, never empty. */
export function adapterNameFor(dir: string): string {
  const base = path.basename(path.resolve(dir))
    .normalize("NFKD").replace(/[\u0300-\u036f]/g, "") // é → e
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .slice(0, MAX_DERIVED_NAME)
    .replace(/^-+|-+$/g, "");
  return base || "my-adapter";
}

/** `name` as a YAML scalar that reads back as the same string (`123`, `true`, `null` need quotes). */
function yamlString(name: string): string {
  let plain: unknown;
  try {
    plain = parseYaml(name);
  } catch {
    plain = undefined;
  }
  return plain === name ? name : JSON.stringify(name);
}

/** init would overwrite `files` (relative to `dir`); nothing was written. */
export class ExistingFilesError extends HermitError {
  constructor(readonly dir: string, readonly files: string[]) {
    const shown = files.map((rel) => displayPath(path.join(dir, rel)));
    super(
      `${shown.join(", ")} already exist${shown.length === 1 ? "s" : ""}; nothing was written`,
      Exit.usage,
    );
    this.name = "ExistingFilesError";
  }
}

type ErrnoError = NodeJS.ErrnoException;

function cannotWrite(where: string, err: unknown): HermitError {
  const code = (err as ErrnoError).code;
  const why = code === "EACCES" || code === "EPERM"
    ? "permission denied"
    : code === "ENOTDIR" || code === "EEXIST"
    ? "a file is in the way of a directory it needs"
    : code === "EROFS"
    ? "read-only file system"
    : code === "ENOSPC"
    ? "no space left on the device"
    : (err as Error).message ?? String(err);
  return new HermitError(
    `cannot create the adapter in ${displayPath(where)}: ${why}; nothing was written`,
    Exit.usage,
  );
}

export function scaffoldAdapter(dir: string, platform: NodeJS.Platform): ScaffoldResult {
  const abs = path.resolve(dir);
  const name = adapterNameFor(abs);
  const windows = platform === "win32";
  const script = windows ? "tools/hello.ps1" : "tools/hello.sh";
  const run = windows
    ? `[powershell, -NoProfile, -ExecutionPolicy, Bypass, -File, ${script}]`
    : `[sh, ${script}]`;
  const files: Record<string, string> = {
    [MANIFEST_FILE]: manifestTemplate(yamlString(name), run),
    "CONTEXT.md": contextTemplate(name),
    [script]: windows ? HELLO_PS1 : HELLO_SH,
  };

  // Refuse before writing anything.
  // The directory may be a symlink to one; a file init would write must not exist even as a
  // dangling symlink.
  const kind = (p: string, stat: typeof statSync = lstatSync) => {
    try {
      return stat(p).isDirectory() ? "dir" : "file";
    } catch (err) {
      return (err as ErrnoError).code === "ENOENT" ? "none" : "other"; // e.g. ENOTDIR: found when writing
    }
  };
  if (kind(abs, statSync) === "file") {
    throw new HermitError(`${displayPath(abs)} is a file, not a directory; nothing was written`, Exit.usage);
  }
  const existing = Object.keys(files).filter((rel) => ["file", "dir"].includes(kind(path.join(abs, rel))));
  if (existing.length > 0) throw new ExistingFilesError(abs, existing);

  const written: string[] = [];
  let createdDir: string | undefined;
  try {
    createdDir = mkdirSync(path.join(abs, "tools"), { recursive: true });
    for (const [rel, text] of Object.entries(files)) {
      const file = path.join(abs, rel);
      writeFileSync(file, text, { flag: "wx" });
      written.push(file);
    }
    if (!windows) chmodSync(path.join(abs, script), 0o755);
  } catch (err) {
    for (const file of written) rmSync(file, { force: true });
    if (createdDir) rmSync(createdDir, { recursive: true, force: true });
    throw cannotWrite(abs, err);
  }
  return { dir: abs, name, files: Object.keys(files) };
}

function manifestTemplate(name: string, run: string): string {
  return `# hermit adapter manifest. Reference: ${docsSection("The adapter")}
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
