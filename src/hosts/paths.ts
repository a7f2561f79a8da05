/**
 * Where things are for a target: home and the per-platform config roots (XDG on Linux, the same
 * dot-directories on macOS, `%USERPROFILE%`, `%APPDATA%`, `%LOCALAPPDATA%` on Windows), joined with
 * the target platform's separators so that Windows paths can be computed (and tested) anywhere.
 */
import path from "node:path";
import type { Target } from "./types.ts";

export type PathApi = typeof path.posix;

export function pathApi(platform: NodeJS.Platform): PathApi {
  return platform === "win32" ? path.win32 : path.posix;
}

/** The home directory: HOME (USERPROFILE on Windows), else `fallback` (the OS's idea of it). */
export function homeOf(
  platform: NodeJS.Platform,
  env: Readonly<Record<string, string | undefined>>,
  fallback: string,
): string {
  if (platform === "win32") {
    return env.USERPROFILE || (env.HOMEDRIVE && env.HOMEPATH ? env.HOMEDRIVE + env.HOMEPATH : fallback);
  }
  return env.HOME || fallback;
}

/** A path under home. */
export function inHome(t: Target, ...segs: string[]): string {
  return pathApi(t.platform).join(t.home, ...segs);
}

/** A path under the project (deploy only). */
export function inProject(t: Target, ...segs: string[]): string {
  if (!t.project) throw new Error("a project path asked for outside deploy");
  return pathApi(t.platform).join(t.project, ...segs);
}

/** `$XDG_CONFIG_HOME` (default `~/.config`); Windows tools that follow XDG use `~/.config` too. */
export function configHome(t: Target): string {
  if (t.platform !== "win32" && t.env.XDG_CONFIG_HOME) return t.env.XDG_CONFIG_HOME;
  return inHome(t, ".config");
}

/** `%APPDATA%` (roaming), Windows only. */
export function appData(t: Target): string {
  return t.env.APPDATA || inHome(t, "AppData", "Roaming");
}

/** `%LOCALAPPDATA%`, Windows only. */
export function localAppData(t: Target): string {
  return t.env.LOCALAPPDATA || inHome(t, "AppData", "Local");
}

/** A directory named by an environment variable (CODEX_HOME…), else `fallback`. */
export function envDir(t: Target, name: string, fallback: string): string {
  const v = t.env[name];
  return v ? pathApi(t.platform).resolve(v) : fallback;
}

export function join(t: Target, ...segs: string[]): string {
  return pathApi(t.platform).join(...segs);
}
