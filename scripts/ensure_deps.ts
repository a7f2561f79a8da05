/**
 * Installs the npm dependencies when node_modules is missing or older than package-lock.json.
 * `npm ci` gives exactly the locked versions; it needs Node and npm, which the README assumes.
 */
import { spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const lock = path.join(root, "package-lock.json");
const stamp = path.join(root, "node_modules", ".package-lock.json");

export function ensureDeps(): void {
  const fresh = existsSync(stamp) && statSync(stamp).mtimeMs >= statSync(lock).mtimeMs;
  if (fresh) return;
  console.error("deps: installing npm dependencies (npm ci)");
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const r = spawnSync(npm, ["ci", "--no-audit", "--no-fund"], { cwd: root, stdio: "inherit" });
  if (r.status !== 0) {
    console.error(
      `deps: npm ci failed (exit ${r.status ?? r.signal}); is npm on PATH and the registry reachable?`,
    );
    process.exit(1);
  }
}

if (import.meta.main) ensureDeps();
