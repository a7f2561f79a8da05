/**
 * The manifest's `sandbox:` blocks: validated here with one located line per mistake (each says
 * what to write instead), and combined: the top-level block is the adapter's default, an entry's
 * own block adds its paths to the default's lists and replaces `network` and `require`; `off` on
 * the entry always wins, `off` at the top applies to entries without a block of their own.
 */
import { type LocatedIssue, type PathSeg, quote, type SourceMap } from "./locate.ts";
import { suggest } from "./names.ts";
import type { Destination, SandboxNetwork, SandboxSettings } from "./types.ts";

const KEYS = ["read", "deny_read", "write", "network", "require"] as const;
const EXAMPLE = "e.g. sandbox: { write: [data/], network: none }, or sandbox: off";

/** One block as written: `off`, or the fields it sets. */
export interface SandboxBlock {
  off: boolean;
  read: string[];
  denyRead: string[];
  write: string[];
  network?: SandboxNetwork;
  require?: boolean;
}

/** Validate a raw `sandbox:` value at `at`; undefined when it is absent or wrong (errors pushed). */
export function parseSandboxBlock(
  value: unknown,
  at: PathSeg[],
  src: SourceMap,
  errors: LocatedIssue[],
): SandboxBlock | undefined {
  if (value === undefined) return undefined;
  const where = at.join(".");
  if (value === "off") return { off: true, read: [], denyRead: [], write: [] };
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    const hint = value === false || value === "false" || value === "no"
      ? "to run unconfined write sandbox: off"
      : EXAMPLE;
    errors.push(
      src.issue(at, `${where} must be off or a mapping of read, deny_read, write, network, require; ${hint}`),
    );
    return undefined;
  }
  const raw = value as Record<string, unknown>;
  const before = errors.length;
  for (const key of Object.keys(raw)) {
    if ((KEYS as readonly string[]).includes(key)) continue;
    const guess = suggest(key, [...KEYS]);
    errors.push(
      src.issue(
        [...at, key],
        `${where}.${key}: unknown key; ${
          guess ? `did you mean '${guess}'?` : `known keys here: ${KEYS.join(", ")}`
        }`,
        { key: true },
      ),
    );
  }
  const block: SandboxBlock = {
    off: false,
    read: paths(raw.read, [...at, "read"], src, errors),
    denyRead: paths(raw.deny_read, [...at, "deny_read"], src, errors),
    write: paths(raw.write, [...at, "write"], src, errors),
    network: network(raw.network, [...at, "network"], src, errors),
  };
  if (raw.require !== undefined) {
    if (typeof raw.require === "boolean") block.require = raw.require;
    else errors.push(src.issue([...at, "require"], `${where}.require must be true or false`));
  }
  return errors.length === before ? block : undefined;
}

function paths(value: unknown, at: PathSeg[], src: SourceMap, errors: LocatedIssue[]): string[] {
  if (value === undefined) return [];
  const where = at.join(".");
  const example = `e.g. ${at[at.length - 1]}: ["\${workspaceFolder}/data", "\${userHome}/.cache/tool"]`;
  const list = typeof value === "string" ? [value] : value;
  if (!Array.isArray(list)) {
    errors.push(src.issue(at, `${where} must be a list of paths, ${example}`));
    return [];
  }
  const out: string[] = [];
  list.forEach((p, i) => {
    if (typeof p !== "string" || p.trim() === "") {
      errors.push(
        src.issue(
          typeof value === "string" ? at : [...at, i],
          `${where} must hold paths (strings), ${example}`,
        ),
      );
    } else out.push(p);
  });
  return out;
}

function network(
  value: unknown,
  at: PathSeg[],
  src: SourceMap,
  errors: LocatedIssue[],
): SandboxNetwork | undefined {
  if (value === undefined) return undefined;
  const where = at.join(".");
  if (value === "none" || value === "all") return value;
  if (typeof value === "string") {
    // one destination written without the list
    const d = destination(value);
    if (d) return [d];
  }
  if (!Array.isArray(value)) {
    errors.push(
      src.issue(
        at,
        `${where} must be none, all, or a list of host:port destinations, e.g. network: [api.github.com:443]`,
      ),
    );
    return undefined;
  }
  const out: Destination[] = [];
  value.forEach((v, i) => {
    const d = typeof v === "string" ? destination(v) : undefined;
    if (d) out.push(d);
    else {
      const shown = typeof v === "string" ? quote(v) : "this entry";
      errors.push(
        src.issue(
          [...at, i],
          `${where}[${i}]: ${shown} is not a host:port destination; write e.g. api.github.com:443 (a port from 1 to 65535)`,
        ),
      );
    }
  });
  return out;
}

const HOST = /^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;

/** `host:port`, `[v6]:port`; undefined when it is not one. Pure. */
export function destination(s: string): Destination | undefined {
  const m = /^\[([0-9a-f:.]+)\]:(\d{1,5})$/i.exec(s.trim()) ?? /^([^:\s]+):(\d{1,5})$/.exec(s.trim());
  if (!m) return undefined;
  const port = Number(m[2]);
  const host = m[1].toLowerCase();
  if (port < 1 || port > 65535) return undefined;
  if (!host.includes(":") && !HOST.test(host)) return undefined;
  return { host, port };
}

/** How a destination is written back: `host:port`, `[v6]:port`. */
export function formatDestination(d: Destination): string {
  return d.host.includes(":") ? `[${d.host}]:${d.port}` : `${d.host}:${d.port}`;
}

export const NO_SANDBOX_SETTINGS: SandboxSettings = {
  off: false,
  read: [],
  denyRead: [],
  write: [],
  require: false,
};

/** An entry's effective settings from the top-level block and its own. Pure. */
export function combineSandbox(
  top: SandboxBlock | undefined,
  own: SandboxBlock | undefined,
): SandboxSettings {
  if (own?.off) return { ...NO_SANDBOX_SETTINGS, off: true };
  if (top?.off && !own) return { ...NO_SANDBOX_SETTINGS, off: true };
  const base = top && !top.off ? top : undefined;
  return {
    off: false,
    read: [...(base?.read ?? []), ...(own?.read ?? [])],
    denyRead: [...(base?.denyRead ?? []), ...(own?.denyRead ?? [])],
    write: [...(base?.write ?? []), ...(own?.write ?? [])],
    network: own?.network ?? base?.network,
    require: own?.require ?? base?.require ?? false,
  };
}
