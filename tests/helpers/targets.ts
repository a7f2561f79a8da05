/**
 * Release binaries for tests, built fresh into a test's own temporary directory with `build.ts
 * --target T --out DIR` (bun cross-compiles offline), never into dist/, which other tests use.
 * The build runs under whichever runtime runs the test (build.ts runs under Deno and Bun alike).
 */
import { spawn } from "node:child_process";
import path from "node:path";
import process from "node:process";
import { root } from "./hermit.ts";

const g = globalThis as unknown as { Deno?: { execPath(): string } };

/** argv that runs build.ts with these arguments. */
function buildArgv(args: string[]): string[] {
  const script = path.join(root, "build.ts");
  if (g.Deno) return [g.Deno.execPath(), "run", "-A", "--no-check", script, ...args];
  return [process.execPath, script, ...args];
}

/** Run build.ts; resolves with its stderr, rejects with it on failure. */
export function runBuild(args: string[], timeoutMs = 240_000): Promise<string> {
  const [cmd, ...rest] = buildArgv(["--compiler", "bun", ...args]);
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, rest, { cwd: root, stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr.setEncoding("utf8").on("data", (d) => (err += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", (e) => (clearTimeout(timer), reject(e)));
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(err);
      else reject(new Error(`build.ts ${args.join(" ")} failed (${code ?? signal}):\n${err}`));
    });
  });
}

/** Build one release target into `outDir`; returns the binary's path. */
export async function buildTarget(target: string, outDir: string): Promise<string> {
  await runBuild(["--target", target, "--out", outDir]);
  return path.join(outDir, `hermit-${target}${target.startsWith("windows") ? ".exe" : ""}`);
}
