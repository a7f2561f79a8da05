/**
 * Where a package runner fetches a locked package from, as far as the entry itself says: the
 * settings in its `env:` (npm's `npm_config_registry` and `npm_config_@scope:registry` in any
 * case, bun's `BUN_CONFIG_REGISTRY`, yarn's, uv's and pip's index URLs) and the runner's own
 * `--registry`/`--index-url` options that point it at another registry. hermit.lock pins a name and
 * a version, not the bytes: the same `name@version` from another registry is other code, so the
 * lock records these and a start whose settings differ is refused like another launch. hermit's
 * own environment never reaches the server (gate 2), so only what hermit.yaml declares counts, and
 * the registry lines of the files the runner reads in the directory it starts in (the project's
 * `.npmrc`, `bunfig.toml`, `.yarnrc.yml`, `uv.toml`). Values are as written (`${env:REG}` stays
 * that); userinfo in a URL (a token) is never recorded. Pure but for `registryFiles`.
 */
import { readFileSync } from "node:fs";
import path from "node:path";

const ENV_KEYS = [
  /^npm_config_(?:@[^:]+:)?registry$/i,
  /^npm_config_(?:userconfig|globalconfig|prefix)$/i, // another .npmrc, which may name a registry
  /^npm_config_replace[-_]registry[-_]host$/i,
  /^BUN_CONFIG_REGISTRY$/,
  /^YARN_(?:NPM_)?REGISTRY(?:_SERVER)?$/,
  /^UV_(?:INDEX|INDEX_URL|EXTRA_INDEX_URL|DEFAULT_INDEX|FIND_LINKS)$/,
  /^PIP_(?:INDEX_URL|EXTRA_INDEX_URL|FIND_LINKS|CONFIG_FILE)$/,
  /^UV_CONFIG_FILE$/,
  /^JSR_URL$/,
];

/** Runner options naming another registry or index (npm/pnpm/bun/yarn, uv, pip/pipx). */
const OPTIONS = new Set([
  "--registry",
  "--index",
  "--index-url",
  "--extra-index-url",
  "--default-index",
  "--find-links",
  "--userconfig", // npm: another .npmrc
  "--globalconfig",
  "--config-file", // uv: another uv.toml
  "--pip-args",
]);

/** A URL without its userinfo (`https://user:token@host/` → `https://host/`). */
function withoutSecret(v: string): string {
  return v.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/@\s"']*@/gi, "$1");
}

/**
 * The registry settings an entry carries, each `SETTING=url`, sorted (empty: the runner's
 * default registry). An option after the package may be the server's own: it counts all the same
 * (a false alarm is a review, a miss is other code). Short forms (`uvx -i`) are not read: too many
 * servers use `-i` for themselves.
 */
export function registrySettings(
  env: Readonly<Record<string, string>> | undefined,
  args: readonly string[],
): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(env ?? {})) {
    if (ENV_KEYS.some((re) => re.test(k))) out.push(`${k}=${withoutSecret(v)}`);
  }
  for (let i = 0; i < args.length; i++) {
    const eq = args[i].indexOf("=");
    const name = eq > 0 ? args[i].slice(0, eq) : args[i];
    if (!OPTIONS.has(name)) continue;
    const value = eq > 0 ? args[i].slice(eq + 1) : args[++i] ?? "";
    if (name === "--pip-args" && !/index|find-links|-i\b|-f\b/.test(value)) continue;
    out.push(`${name}=${withoutSecret(value)}`);
  }
  return out.sort();
}

/** Whether two lists of settings are the same (a lock without `registry` holds none). */
export function sameRegistry(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  return (a ?? []).join("\n") === (b ?? []).join("\n");
}

/** In words, for a message: `npm_config_registry=http://…` or `the default registry`. */
export function registryWords(settings: readonly string[] | undefined): string {
  return settings?.length ? settings.join(", ") : "the default registry";
}

const FILES: [string, RegExp][] = [
  [".npmrc", /^\s*(?:(?:@[^:\s]+:)?registry|replace-registry-host)\s*=.*$/gm],
  ["bunfig.toml", /^\s*(?:registry\s*=|"?@[^"\s]+"?\s*=|\[install\.(?:scopes|registry)).*$/gm],
  [".yarnrc.yml", /^\s*(?:npmRegistryServer|npmScopes)\s*:.*$/gm],
  ["uv.toml", /^\s*(?:index-url|extra-index-url|default-index|find-links|url)\s*=.*$|^\s*\[\[index\]\].*$/gm],
  ["pip.conf", /^\s*(?:index-url|extra-index-url|find-links)\s*=.*$/gm],
];

/**
 * The registry lines of the files in `dir` (the directory the runner starts in) that point it at
 * another registry, each `FILE:line`: npm reads the project's `.npmrc` there, bun `bunfig.toml`,
 * yarn `.yarnrc.yml`, uv `uv.toml`, pip `pip.conf` (`PIP_CONFIG_FILE`). An unreadable file counts
 * as none (the runner cannot read it either).
 */
export function registryFiles(dir: string): string[] {
  const out: string[] = [];
  for (const [name, re] of FILES) {
    let text: string;
    try {
      text = readFileSync(path.join(dir, name), "utf8").slice(0, 1 << 20);
    } catch {
      continue;
    }
    for (const m of text.matchAll(re)) out.push(`${name}:${withoutSecret(m[0].trim().replace(/\s+/g, " "))}`);
  }
  return out;
}

/** Everything above for a stdio entry of the adapter in `adapterDir`, sorted. Reads its cwd. */
export function entryRegistry(
  u: { env?: Readonly<Record<string, string>>; args: readonly string[]; cwd?: string },
  adapterDir: string,
): string[] {
  return [...registrySettings(u.env, u.args), ...registryFiles(path.resolve(adapterDir, u.cwd ?? "."))]
    .sort();
}
