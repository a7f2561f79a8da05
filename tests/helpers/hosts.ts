/**
 * The real agent-host CLIs (Claude Code, Codex) from `.ci/hosts` (installed by `.ci/run`, or by
 * `npm --prefix .ci/hosts ci`). When they are missing the host tests are skipped with a note,
 * except in CI (CI or HERMIT_REQUIRE_HOSTS set), where a missing CLI is a failure.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { root } from "./hermit.ts";

export function hostCli(name: "claude" | "codex"): string | undefined {
  const dir = process.env.HERMIT_HOST_CLIS ?? path.join(root, ".ci", "hosts", "node_modules", ".bin");
  const bin = path.join(dir, name);
  if (existsSync(bin)) return bin;
  if (process.env.CI || process.env.HERMIT_REQUIRE_HOSTS) {
    throw new Error(`${bin} is missing: run 'npm --prefix .ci/hosts ci' (.ci/run does)`);
  }
  return undefined;
}

/** A throwaway HOME where Claude Code approves project MCP servers without asking. */
export function claudeHome(): { home: string; cleanup(): void } {
  const home = mkdtempSync(path.join(os.tmpdir(), "hermit-claude-home-"));
  mkdirSync(path.join(home, ".claude"), { recursive: true });
  writeFileSync(
    path.join(home, ".claude", "settings.json"),
    JSON.stringify({ enableAllProjectMcpServers: true }),
  );
  return { home, cleanup: () => rmSync(home, { recursive: true, force: true }) };
}

/** `claude mcp list` lines: name → status marker text ("✔ Connected", "✘ Failed to connect — …"). */
export function parseClaudeList(out: string): Map<string, string> {
  const status = new Map<string, string>();
  for (const line of out.split("\n")) {
    const m = /^(\S.*?): (.*) - ([✔✘!⏸].*)$/.exec(line.trim());
    if (m) status.set(m[1], m[3]);
  }
  return status;
}
