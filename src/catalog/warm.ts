/**
 * Before `hermit add` starts a catalog entry confined without a network (`network: none`, where
 * hermit runs npm offline), its package and dependencies are fetched into npm's cache, so the
 * first start on a fresh machine does not fail with ENOTCACHED. The fetch is npx's own install
 * with install scripts off, running only the runtime's own `--version` by its absolute path
 * afterwards (never a bin of the package): no code of the package runs. It runs in a private new
 * directory holding an empty `package.json`, so that directory is npm's project: no project
 * `.npmrc` of anyone else's (a shared /tmp, the user's project) can set npm's `script-shell` or
 * anything else for it, and no `node_modules` can answer for the package. POSIX only (on Windows
 * npx is a `.cmd`; the start there needs a warm cache as before).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import process from "node:process";
import { runForOutput } from "../platform/run_output.ts";
import { which } from "../platform/which.ts";
import type { CatalogEntry } from "./entries.ts";

/** Does starting `entry` confined need its package in npm's cache already? */
export function needsWarmCache(entry: CatalogEntry): boolean {
  return entry.sandbox !== "off" && entry.sandbox.network === "none";
}

/** The npx command line that fetches `pkg` without running it (pure). */
export function warmArgv(npx: string, pkg: string, runtime: string): string[] {
  return [npx, "--yes", "--package", pkg, "--", runtime, "--version"];
}

/** Fetch `entry`'s package into npm's cache; undefined when done, else why not (one line). */
export async function warmNpmCache(entry: CatalogEntry): Promise<string | undefined> {
  if (process.platform === "win32") return undefined;
  const npx = which("npx");
  if (!npx) return "npx is not on PATH";
  const pkg = `${entry.package}@${entry.version}`;
  const env: Record<string, string | undefined> = { ...process.env, npm_config_ignore_scripts: "true" };
  delete env.npm_config_offline;
  const project = mkdtempSync(path.join(tmpdir(), "hermit-fetch-")); // 0700: only ours
  try {
    writeFileSync(path.join(project, "package.json"), "{}\n");
    const r = await runForOutput(warmArgv(npx, pkg, process.execPath), { env, cwd: project });
    return r.code === 0 ? undefined : `fetching ${pkg} into the npm cache failed (npx exited ${r.code})`;
  } finally {
    rmSync(project, { recursive: true, force: true });
  }
}
