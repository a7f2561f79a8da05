/**
 * Before `hermit add` starts a catalog entry confined without a network (`network: none`, where
 * hermit runs npm offline), its package and dependencies are fetched into npm's cache, so the
 * first start on a fresh machine does not fail with ENOTCACHED. The fetch is npx's own install
 * with install scripts off, running only the runtime's own `--version` by its absolute path
 * afterwards (never a bin of the package): no code of the package runs. POSIX only (on Windows
 * npx is a `.cmd`; the start there needs a warm cache as before).
 */
import { tmpdir } from "node:os";
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
  // not where a node_modules of the project's could answer for the package instead
  const r = await runForOutput(warmArgv(npx, pkg, process.execPath), { env, cwd: tmpdir() });
  return r.code === 0 ? undefined : `fetching ${pkg} into the npm cache failed (npx exited ${r.code})`;
}
