/**
 * The real agent-host CLIs (Claude Code, Codex, Gemini CLI, OpenCode, Pi) from `.ci/hosts`
 * (installed by `scripts/install-test-deps.sh`, or by `npm --prefix .ci/hosts ci`). When they are
 * missing the host tests are skipped and the skip recorded for the run's summary
 * (requirements.ts), except in CI (CI or HERMIT_REQUIRE_HOSTS set), where a missing CLI is a
 * failure.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { hermitEnv, root, type RunResult } from "./hermit.ts";
import { cmdline, kill, processesWhere, type Reaper } from "./procs.ts";
import { requirements } from "./requirements.ts";

export type HostCli = "claude" | "codex" | "gemini" | "opencode" | "pi";

const TITLES: Record<HostCli, string> = {
  claude: "Claude Code CLI",
  codex: "Codex CLI",
  gemini: "Gemini CLI",
  opencode: "OpenCode CLI",
  pi: "Pi CLI",
};

/** How to install the host CLIs (what a missing one's skip says). */
export const HOSTS_FIX = "npm --prefix .ci/hosts ci";

/** The CLI's path; undefined (a skip, recorded) when it is not installed outside CI. */
export function hostCli(name: HostCli): string | undefined {
  const modules = path.join(root, ".ci", "hosts", "node_modules");
  const dir = process.env.HERMIT_HOST_CLIS ?? path.join(modules, ".bin");
  const bin = path.join(dir, name);
  if (existsSync(bin)) return bin;
  // OpenCode is installed as its platform package (see .ci/hosts/package.json), which has no .bin link
  const platformBin = path.join(modules, "opencode-linux-x64", "bin", "opencode");
  if (name === "opencode" && !process.env.HERMIT_HOST_CLIS && existsSync(platformBin)) return platformBin;
  if (process.env.CI || process.env.HERMIT_REQUIRE_HOSTS) {
    throw new Error(`${bin} is missing: run '${HOSTS_FIX}' (.ci/run does)`);
  }
  requirements([{ what: TITLES[name], ok: false, fix: HOSTS_FIX }]);
  return undefined;
}

/**
 * The Node.js `.ci/hosts` brings (its `node` package, 22.x) for host CLIs that need a newer Node
 * than the machine's: Pi needs 22.19. Undefined (a skip, recorded) when it is not installed.
 */
export function hostNode(): string | undefined {
  const bin = path.join(root, ".ci", "hosts", "node_modules", ".bin", "node");
  if (existsSync(bin)) return bin;
  if (process.env.CI || process.env.HERMIT_REQUIRE_HOSTS) {
    throw new Error(`${bin} is missing: run '${HOSTS_FIX}' (.ci/run does)`);
  }
  requirements([{ what: "Node.js 22 for Pi (.ci/hosts)", ok: false, fix: HOSTS_FIX }]);
  return undefined;
}

/** `pi mcp list --json`: each server's state ("connected", "failed", …) and tools. */
export interface PiServer {
  name: string;
  scope: string;
  state: string;
  tools: string[];
  error?: string;
}
export function parsePiList(out: string): { servers: Map<string, PiServer>; note?: string } {
  const v = JSON.parse(out) as { servers: PiServer[]; note?: string };
  return { servers: new Map(v.servers.map((s) => [s.name, s])), note: v.note };
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

/**
 * The environment for a host CLI that must see nothing of the user's: HOME is `home`, and the XDG
 * directories, TMPDIR and hermit's state are under it; Gemini CLI's system settings files are
 * files there that do not exist; the caller's host variables (GEMINI_*, GOOGLE_*, OPENCODE_*,
 * CLAUDE_*, CODEX_*, XDG_*, HERMIT_SERVE_TOKEN) are dropped. npm_config_offline keeps OpenCode's
 * background look-up of its plugin package off the network.
 */
export function isolatedEnv(home: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined) continue;
    if (/^(GEMINI_|GOOGLE_|OPENCODE_|CLAUDE_|CODEX_|XDG_)/.test(k) || k === "HERMIT_SERVE_TOKEN") continue;
    env[k] = v;
  }
  const tmp = path.join(home, ".tmp");
  mkdirSync(tmp, { recursive: true });
  return {
    ...env,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, ".config"),
    XDG_DATA_HOME: path.join(home, ".local", "share"),
    XDG_CACHE_HOME: path.join(home, ".cache"),
    XDG_STATE_HOME: path.join(home, ".local", "state"),
    TMPDIR: tmp,
    HERMIT_HOME: path.join(home, ".hermit-state"),
    GEMINI_CLI_SYSTEM_SETTINGS_PATH: path.join(home, "no-system-settings.json"),
    GEMINI_CLI_SYSTEM_DEFAULTS_PATH: path.join(home, "no-system-defaults.json"),
    npm_config_offline: "true",
  };
}

/**
 * Run a host CLI to completion in its own process group, tracked by `reaper` (it starts hermit,
 * which may start tools; in `env` with hermitEnv's HERMIT_HOME). Past the deadline the whole group
 * is killed and the run fails.
 */
export function runHostCli(
  cmd: string,
  args: string[],
  opts: { cwd: string; env: Record<string, string | undefined>; reaper: Reaper; timeoutMs?: number },
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: opts.cwd,
      env: hermitEnv(opts.env) as Record<string, string>,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    opts.reaper.track(child.pid);
    opts.reaper.trackGroup(child.pid);
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
    const timeoutMs = opts.timeoutMs ?? 120_000;
    const timer = setTimeout(() => {
      kill(-child.pid!);
      reject(new Error(`timed out after ${timeoutMs} ms: ${cmd} ${args.join(" ")}\n${stdout}${stderr}`));
    }, timeoutMs);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Live processes whose command line or environment mentions `marker` (a test's temp directory). */
export function processesMentioning(marker: string): { pid: number; cmdline: string }[] {
  const pids = new Set([...processesWhere({ cmdline: marker }), ...processesWhere({ environ: marker })]);
  return [...pids].map((pid) => ({ pid, cmdline: cmdline(pid) }));
}

const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;?]*[A-Za-z]`, "g");

/** Text without ANSI colour codes. */
function stripAnsi(text: string): string {
  return text.replace(ANSI, "");
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

/**
 * `gemini mcp list` lines (it prints them on stderr): name → status, one of "Connected",
 * "Disconnected", "Disabled" (untrusted folder, or turned off), "Blocked", "Connecting".
 * `✓ notes: /…/hermit serve /…/notes (stdio) - Connected`
 */
export function parseGeminiList(out: string): Map<string, string> {
  const status = new Map<string, string>();
  for (const line of stripAnsi(out).split("\n")) {
    const m = /^[✓✗○⛔…] (\S.*?): (.*) - ([A-Z][a-z]+)$/.exec(line.trim());
    if (m) status.set(m[1], m[3]);
  }
  return status;
}

/**
 * `opencode mcp list` lines: name → status, e.g. "connected", "failed", "disabled",
 * "needs authentication", "not initialized" (a failure's reason is on the next line).
 * `●  ✓ notes connected`
 */
export function parseOpencodeList(out: string): Map<string, string> {
  const status = new Map<string, string>();
  for (const line of stripAnsi(out).split("\n")) {
    const m = /^(?:●\s+)?[✓✗○⚠] (\S+) (\S.*)$/.exec(line.trim());
    if (m) status.set(m[1], m[2].trim());
  }
  return status;
}
