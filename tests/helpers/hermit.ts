/**
 * How tests run hermit: the compiled binary (`dist/hermit`, the default, what users run), or the
 * sources under Deno or Bun (`deno task test` sets HERMIT_BIN, HERMIT_DENO and HERMIT_BUN); and
 * with which state directory: the test process's own temporary HERMIT_HOME unless the test sets one.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const mainTs = path.join(root, "src", "main.ts");
export const examples = path.join(root, "examples");
export const fixtures = path.join(root, "tests", "fixtures");

export type Flavor = "bin" | "deno" | "bun";

const g = globalThis as unknown as { Deno?: { execPath(): string } };

export function hermitBin(): string {
  const bin = process.env.HERMIT_BIN ??
    path.join(root, "dist", process.platform === "win32" ? "hermit.exe" : "hermit");
  if (!existsSync(bin)) {
    throw new Error(`${bin} is missing: run 'deno task build' first (deno task test does)`);
  }
  return bin;
}

function denoPath(): string | undefined {
  if (process.env.HERMIT_DENO) return process.env.HERMIT_DENO;
  return g.Deno?.execPath();
}

export function bunPath(): string | undefined {
  const local = path.join(root, "node_modules", ".bin", "bun");
  return process.env.HERMIT_BUN ?? (existsSync(local) ? local : undefined);
}

/** argv that runs hermit in the given flavor. */
export function hermitArgv(flavor: Flavor = "bin"): string[] {
  if (flavor === "bin") return [hermitBin()];
  if (flavor === "deno") {
    const d = denoPath();
    if (!d) throw new Error("no deno to run the sources with (set HERMIT_DENO)");
    return [d, "run", "-A", "--no-check", mainTs];
  }
  const b = bunPath();
  if (!b) throw new Error("no bun to run the sources with (set HERMIT_BUN)");
  return [b, mainTs];
}

/** The flavors this machine can run: always the binary, plus Deno and Bun when found. */
export function flavors(): Flavor[] {
  const out: Flavor[] = ["bin"];
  if (denoPath()) out.push("deno");
  if (bunPath()) out.push("bun");
  return out;
}

let home: string | undefined;

function removeTestHome(): void {
  if (home) rmSync(home, { recursive: true, force: true });
  home = undefined;
}
process.on("exit", removeTestHome); // Bun
(globalThis as { addEventListener?: (e: string, f: () => void) => void }).addEventListener?.(
  "unload", // Deno (its test runner emits no process "exit")
  removeTestHome,
);

/**
 * hermit's state directory (HERMIT_HOME: the schema cache, OAuth tokens) for this test process: a
 * temporary directory made on first use and removed when the process exits. So no test touches
 * the user's state, and nothing cached by one run (or by the Deno pass) is seen by the next.
 */
export function testHome(): string {
  home ??= mkdtempSync(path.join(os.tmpdir(), "hermit-test-home-"));
  return home;
}

/**
 * The environment for a hermit process: `env` (default: this process's) with HERMIT_HOME set to
 * testHome(), unless the test chose its own (one that differs from the HERMIT_HOME this process
 * inherited, e.g. the run-wide one `deno task test` sets).
 */
export function hermitEnv(
  env: Record<string, string | undefined> = process.env,
): Record<string, string | undefined> {
  const chosen = !!env.HERMIT_HOME && env.HERMIT_HOME !== process.env.HERMIT_HOME;
  return chosen ? env : { ...env, HERMIT_HOME: testHome() };
}

export interface RunResult {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  cwd?: string;
  env?: Record<string, string | undefined>;
  input?: string;
  timeoutMs?: number;
  flavor?: Flavor;
}

/**
 * Run hermit to completion, in `opts.env` (default: this process's) with hermitEnv's HERMIT_HOME;
 * kills it (and fails) past the timeout.
 */
export function runHermit(args: string[], opts: RunOptions = {}): Promise<RunResult> {
  const [cmd, ...pre] = hermitArgv(opts.flavor);
  return runCommand(cmd, [...pre, ...args], { ...opts, env: hermitEnv(opts.env) });
}

export function runCommand(cmd: string, args: string[], opts: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: opts.cwd,
      env: (opts.env ?? process.env) as Record<string, string>,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
    const timer = setTimeout(() => {
      try {
        process.kill(child.pid!, "SIGKILL");
      } catch { /* gone */ }
      reject(
        new Error(
          `timed out after ${opts.timeoutMs ?? 60000} ms: ${cmd} ${args.join(" ")}\nstderr: ${stderr}`,
        ),
      );
    }, opts.timeoutMs ?? 60000);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    if (opts.input !== undefined) child.stdin.end(opts.input);
    else child.stdin.end();
  });
}
