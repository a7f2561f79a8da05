/**
 * Gate 2, the environment: what a child (upstream server or command tool) gets. The baseline keys,
 * `XDG_*`, the Windows essentials and the TLS CA-bundle paths from hermit's own environment, plus
 * exactly what the manifest entry declares. Nothing else is inherited from whoever launched hermit
 * (a host, a relay, a shell full of secrets), and of an inherited PATH only the absolute entries:
 * a relative one (`node_modules/.bin`) would find programs by the child's working directory, which
 * may be where a confined entry writes (`which` skips them for the same reason). Pure: same
 * inputs, same environment.
 */

/** Hermes's `_SAFE_ENV_KEYS`. */
export const BASELINE_KEYS = ["PATH", "HOME", "USER", "LANG", "LC_ALL", "TERM", "SHELL", "TMPDIR"] as const;

/**
 * Paths to CA bundles: not secrets, and without them anything that downloads behind a
 * TLS-intercepting proxy (npx, uvx) fails. Hermes drops them; hermit keeps them.
 */
export const TLS_KEYS = ["NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR"] as const;

/** Matched case-insensitively, as Windows environment names are. */
export const WINDOWS_KEYS = [
  "ALLUSERSPROFILE",
  "APPDATA",
  "COMMONPROGRAMFILES",
  "COMMONPROGRAMFILES(X86)",
  "COMMONPROGRAMW6432",
  "COMPUTERNAME",
  "COMSPEC",
  "HOMEDRIVE",
  "HOMEPATH",
  "LOCALAPPDATA",
  "NUMBER_OF_PROCESSORS",
  "OS",
  "PATHEXT",
  "PROCESSOR_ARCHITECTURE",
  "PROGRAMDATA",
  "PROGRAMFILES",
  "PROGRAMFILES(X86)",
  "PROGRAMW6432",
  "PUBLIC",
  "SYSTEMDRIVE",
  "SYSTEMROOT",
  "TEMP",
  "TMP",
  "USERDOMAIN",
  "USERNAME",
  "USERPROFILE",
  "WINDIR",
] as const;

const windowsSet = new Set<string>(WINDOWS_KEYS);
const baselineSet = new Set<string>([...BASELINE_KEYS, ...TLS_KEYS]);

/** A PATH value without its relative entries, the rest as they were written (quotes too). Pure. */
function absoluteEntries(value: string, windows: boolean): string {
  const sep = windows ? ";" : ":";
  const absolute = (d: string) =>
    windows ? /^(?:[A-Za-z]:)?[\\/]/.test(d.replace(/^"(.*)"$/, "$1")) : d.startsWith("/");
  return value.split(sep).filter((d) => d && absolute(d)).join(sep);
}

/** Is `key` from hermit's own environment passed to children? */
export function inheritable(key: string, platform: NodeJS.Platform): boolean {
  if (baselineSet.has(key) || key.startsWith("XDG_")) return true;
  if (platform === "win32") {
    const upper = key.toUpperCase();
    return windowsSet.has(upper) || baselineSet.has(upper) || upper.startsWith("XDG_");
  }
  return false;
}

/**
 * The environment for a child: the inheritable part of `parent`, then `declared` on top (already
 * interpolated). Inherited values that are exported shell functions (`() {…`) are dropped, as the
 * SDK does. On Windows a declared key replaces an inherited one that differs only in case (`Path`
 * and `PATH` are one variable there; two spellings would leave the child's choice to chance).
 */
export function childEnv(
  parent: Readonly<Record<string, string | undefined>>,
  declared: Readonly<Record<string, string>>,
  platform: NodeJS.Platform,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(parent)) {
    if (v === undefined || v.startsWith("()")) continue;
    if (!inheritable(k, platform)) continue;
    const isPath = platform === "win32" ? k.toUpperCase() === "PATH" : k === "PATH";
    out[k] = isPath ? absoluteEntries(v, platform === "win32") : v;
  }
  for (const [k, v] of Object.entries(declared)) {
    if (platform === "win32") {
      for (const old of Object.keys(out)) {
        if (old !== k && old.toUpperCase() === k.toUpperCase()) delete out[old];
      }
    }
    out[k] = v;
  }
  return out;
}
