/**
 * Before `hermit add` starts a catalog entry confined without a network (`network: none`, where
 * hermit runs npm offline), its package and dependencies are fetched into npm's cache, so the
 * first start on a fresh machine does not fail with ENOTCACHED. The fetch is npx's own install
 * with install scripts off, running only the runtime's own `--version` by its absolute path
 * afterwards (never a bin of the package): no code of the package runs. It runs in a private new
 * directory (`fetch_dir.ts`: named after its owner, so a later fetch removes it when a kill left it
 * behind) holding an empty `package.json`, so that directory is npm's project: no project
 * `.npmrc` of anyone else's (a shared /tmp, the user's project) can set npm's `script-shell` or
 * anything else for it, and no `node_modules` can answer for the package. npx runs in a process
 * group of its own under the watchdog, like every server hermit starts: a `kill -9` of `hermit add`
 * takes the download with it. POSIX only (on Windows npx is a `.cmd`; the start there needs a warm
 * cache as before).
 */
import { rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import process from "node:process";
import { which } from "../platform/which.ts";
import { whileWaiting } from "../progress.ts";
import { spawnInGroup } from "../process/group.ts";
import { stoppingOnSignal } from "../process/interrupt.ts";
import { disableWatchdog, enableWatchdog } from "../process/supervisor.ts";
import type { CatalogEntry } from "./entries.ts";
import { makeFetchDir, noteFetchGroup } from "./fetch_dir.ts";

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
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && k !== "npm_config_offline") env[k] = v;
  }
  env.npm_config_ignore_scripts = "true";
  env.npm_config_update_notifier = "false"; // npm's own upgrade advert is not the user's business here
  const project = makeFetchDir(tmpdir()); // 0700: only ours
  enableWatchdog();
  try {
    writeFileSync(path.join(project, "package.json"), "{}\n");
    const [file, ...args] = warmArgv(npx, pkg, process.execPath);
    const group = spawnInGroup(file, args, { env, cwd: project, stdio: ["ignore", "ignore", "inherit"] });
    noteFetchGroup(project, group.pgid);
    const status = await stoppingOnSignal(() =>
      whileWaiting(`npx to fetch ${pkg} into npm's cache`, group.exited)
    );
    await group.stop(); // anything it left running
    return status.code === 0 ? undefined : `fetching ${pkg} into the npm cache failed (npx ${status.reason})`;
  } finally {
    await disableWatchdog();
    rmSync(project, { recursive: true, force: true });
  }
}
