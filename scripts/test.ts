/**
 * `deno task test`: the whole gate a change must pass, in order: npm dependencies, the binary
 * (e2e tests run it), lint and format, type check (tsc: the SDK's types do not resolve under
 * `deno check`, typescript-sdk#2701), then the one node:test suite under Deno and under Bun.
 *
 *   deno task test                       everything
 *   deno task test --runtime deno|bun    one runtime only
 *   deno task test --no-build            reuse dist/hermit
 *   deno task test tests/unit/…          only these test files (still both runtimes)
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { ensureDeps } from "./ensure_deps.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const deno = (globalThis as unknown as { Deno: { execPath(): string } }).Deno.execPath();
const bun = path.join(root, "node_modules", ".bin", process.platform === "win32" ? "bun.exe" : "bun");

const args = process.argv.slice(2);
let runtimes = ["deno", "bun"];
let build = true;
const files: string[] = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--runtime") {
    const runtime = args[++i] ?? "";
    if (runtime !== "deno" && runtime !== "bun") {
      console.error(`test: error: --runtime must be deno or bun, not '${runtime}'`);
      process.exit(2);
    }
    runtimes = [runtime];
  } else if (args[i] === "--no-build") build = false;
  else files.push(args[i]);
}

// hermit's own state (schema cache, tokens) goes to a throwaway directory, not the user's
const home = mkdtempSync(path.join(os.tmpdir(), "hermit-test-home-"));
const env = {
  ...process.env,
  HERMIT_HOME: home,
  HERMIT_DENO: deno,
  HERMIT_BUN: bun,
  HERMIT_BIN: path.join(root, "dist", process.platform === "win32" ? "hermit.exe" : "hermit"),
};

const results: { step: string; ok: boolean; seconds: number }[] = [];
function step(name: string, cmd: string, argv: string[]): boolean {
  console.error(`\n=== ${name}`);
  const t0 = performance.now();
  const r = spawnSync(cmd, argv, { cwd: root, stdio: "inherit", env });
  const ok = r.status === 0;
  results.push({ step: name, ok, seconds: (performance.now() - t0) / 1000 });
  return ok;
}

ensureDeps();
let ok = true;
if (build || !existsSync(env.HERMIT_BIN)) {
  ok = step("build dist/hermit", deno, ["run", "-A", "build.ts"]) && ok;
}
if (ok) {
  ok = step("lint", deno, ["lint"]) && ok;
  ok = step("format", deno, ["fmt", "--check"]) && ok;
  const node = spawnSync("node", ["--version"]).status === 0;
  ok = step(
    "type check (tsc)",
    node ? "node" : deno,
    node
      ? ["node_modules/typescript/bin/tsc", "-p", "."]
      : ["run", "-A", "node_modules/typescript/bin/tsc", "-p", "."],
  ) && ok;
  const targets = files.length ? files : ["tests/"];
  if (runtimes.includes("deno")) {
    ok = step("tests under deno", deno, ["test", "-A", "--no-check", ...targets]) && ok;
  }
  if (runtimes.includes("bun")) {
    ok = step("tests under bun", bun, ["test", "--timeout", "120000", ...targets]) && ok;
  }
}

rmSync(home, { recursive: true, force: true });
console.error("\n=== summary");
for (const r of results) console.error(`${r.ok ? "pass" : "FAIL"}  ${r.step} (${r.seconds.toFixed(1)} s)`);
process.exit(ok ? 0 : 1);
