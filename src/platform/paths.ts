/**
 * Where hermit keeps its own state (the schema cache, OAuth tokens): `HERMIT_HOME` when set, else
 * the platform's place for application state — `$XDG_STATE_HOME/hermit` (default
 * `~/.local/state/hermit`) on Linux, `~/Library/Application Support/hermit` on macOS,
 * `%LOCALAPPDATA%\hermit` on Windows. Pure: platform and environment in, path out.
 */
import path from "node:path";
import process from "node:process";

/**
 * The user's home: `HOME` (or `USERPROFILE`), else the OS's answer — which throws where there is
 * no passwd entry (a bare container root file system) — else the temp directory.
 */
export function homeDir(env: Readonly<Record<string, string | undefined>> = process.env): string {
  if (env.HOME) return env.HOME;
  if (env.USERPROFILE) return env.USERPROFILE;
  const os = process.getBuiltinModule("node:os") as typeof import("node:os"); // rarely needed: loaded only then
  try {
    return os.homedir();
  } catch {
    return os.tmpdir();
  }
}

export function stateDir(
  platform: NodeJS.Platform,
  env: Readonly<Record<string, string | undefined>>,
  home: string,
): string {
  if (env.HERMIT_HOME) return env.HERMIT_HOME;
  if (platform === "win32") {
    const local = env.LOCALAPPDATA ??
      (env.USERPROFILE ? path.win32.join(env.USERPROFILE, "AppData", "Local") : home);
    return path.win32.join(local, "hermit");
  }
  if (platform === "darwin") return path.posix.join(home, "Library", "Application Support", "hermit");
  return path.posix.join(env.XDG_STATE_HOME || path.posix.join(home, ".local", "state"), "hermit");
}
