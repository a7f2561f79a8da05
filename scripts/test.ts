/**
 * `deno task test`: the whole gate a change must pass, in order: npm dependencies, the binary
 * (e2e tests run it), lint and format, type check (tsc: the SDK's types do not resolve under
 * `deno check`, typescript-sdk#2701), then the one node:test suite under Deno and under Bun.
 * Tests whose OS tool or host CLI is missing here are skipped (outside CI) and recorded; the run
 * ends with one summary of them, the same whichever runtimes ran (tests/helpers/requirements.ts).
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
import { readSkips, type SkipRecord, skipSummary } from "../tests/helpers/requirements.ts";
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
function step(name: string, cmd: string, argv: string[], extraEnv: Record<string, string> = {}): boolean {
  console.error(`\n=== ${name}`);
  const t0 = performance.now();
  const r = spawnSync(cmd, argv, { cwd: root, stdio: "inherit", env: { ...env, ...extraEnv } });
  const ok = r.status === 0;
  results.push({ step: name, ok, seconds: (performance.now() - t0) / 1000 });
  return ok;
}

ensureDeps();
let ok = true;
const skips: Record<string, SkipRecord[]> = {};
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
  // Each runtime records the tests it skipped for a missing tool (tests/helpers/requirements.ts).
  const skipsFile = (runtime: string) => path.join(home, `skips-${runtime}.jsonl`);
  if (runtimes.includes("deno")) {
    ok = step("tests under deno", deno, ["test", "-A", "--no-check", ...targets], {
      HERMIT_TEST_SKIPS: skipsFile("deno"),
    }) && ok;
    skips.deno = readSkips(skipsFile("deno"));
  }
  if (runtimes.includes("bun")) {
    ok = step("tests under bun", bun, ["test", "--timeout", "120000", ...targets], {
      HERMIT_TEST_SKIPS: skipsFile("bun"),
    }) && ok;
    skips.bun = readSkips(skipsFile("bun"));
  }
}

rmSync(home, { recursive: true, force: true });
console.error("\n=== summary");
for (const r of results) console.error(`${r.ok ? "pass" : "FAIL"}  ${r.step} (${r.seconds.toFixed(1)} s)`);
const skipped = skipSummary(skips);
if (skipped) console.error(skipped.trimEnd());
process.exit(ok ? 0 : 1);
