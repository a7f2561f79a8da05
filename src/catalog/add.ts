/**
 * `hermit add DIR NAME`: a catalog entry spliced into the adapter's `hermit.yaml` — the
 * `mcp_servers` entry (pinned package, include list, trust, environment placeholders, its
 * sandbox policy where this hermit knows the `sandbox:` key) and its tools appended to
 * `exports.tools` — with every comment and byte elsewhere kept. Planning is pure (text in, text
 * out, checked by loading the result as a manifest); starting the server and writing the lock are
 * the command's, which puts the old text back if the server does not start.
 */
import path from "node:path";
import { type Created, type Json, type JsonObject } from "../hosts/edit/json.ts";
import { EditError } from "../hosts/edit/lines.ts";
import { appendYamlSeq, setYaml } from "../hosts/edit/yaml.ts";
import { Exit, HermitError, usageError } from "../errors.ts";
import { type LoadedManifest, parseManifest } from "../manifest/load.ts";
import { suggest } from "../manifest/names.ts";
import { knownKeys, TOOL_NAME } from "../manifest/schema.ts";
import type { Trust } from "../manifest/types.ts";
import { CATALOG, type CatalogEntry, catalogEntry, type SandboxPolicy } from "./entries.ts";

export interface AddOptions {
  /** The `mcp_servers` key (default: the entry's name). */
  as?: string;
  /** The tools to export (default: the entry's include list). */
  tools?: string[];
  trust?: Trust;
  /** Exported names get this prefix (`prefix:` in the entry). */
  prefix?: string;
  /** `{root}` in the entry's arguments and policy (default `${workspaceFolder}`). */
  root?: string;
}

export interface AddPlan {
  entry: CatalogEntry;
  server: string;
  /** The new hermit.yaml text, and the manifest it loads as (not checked when a `sandbox:` block was
   * written for a schema that does not know it yet: tests of the splice only). */
  text: string;
  loaded?: LoadedManifest;
  /** The names appended to exports.tools. */
  exported: string[];
  /** The entry's policy (`{root}` filled in), and whether it went into hermit.yaml (only where `sandbox:` is known). */
  sandbox: Json;
  sandboxWritten: boolean;
}

export function findEntry(name: string): CatalogEntry {
  const entry = catalogEntry(name);
  if (entry) return entry;
  const hint = suggest(name, CATALOG.map((e) => e.name));
  throw usageError(
    `no catalog entry '${name}'${hint ? ` (did you mean '${hint}'?)` : ""}; 'hermit catalog' lists them: ${
      CATALOG.map((e) => e.name).join(", ")
    }`,
  );
}

/** True once the manifest schema takes a `sandbox:` block in an `mcp_servers` entry. */
export function sandboxKnown(): boolean {
  return knownKeys(["mcp_servers", "x"]).includes("sandbox");
}

/** The `mcp_servers` entry as JSON, `{root}` filled in. */
export function entryJson(entry: CatalogEntry, opts: AddOptions, withSandbox: boolean): JsonObject {
  const root = opts.root ?? "${workspaceFolder}";
  const fill = (s: string) => s.replaceAll("{root}", root);
  const include = opts.tools ?? entry.include;
  const out: JsonObject = {
    command: "npx",
    args: ["-y", `${entry.package}@${entry.version}`, ...entry.args.map(fill)],
  };
  if (Object.keys(entry.env).length) out.env = { ...entry.env };
  out.tools = { include };
  if (opts.prefix) out.prefix = opts.prefix;
  out.trust = opts.trust ?? entry.trust;
  // the catalog's vetted read-only tools: on an untrusted server only these skip approval (gate 5)
  const readOnly = entry.readOnly.filter((t) => include.includes(t));
  if (readOnly.length) out.read_only_tools = readOnly;
  if (withSandbox) out.sandbox = policyJson(entry.sandbox, fill);
  return out;
}

export function policyJson(p: SandboxPolicy, fill: (s: string) => string = (s) => s): Json {
  if (p === "off") return "off";
  const out: JsonObject = {};
  if (p.read?.length) out.read = p.read.map(fill);
  if (p.deny_read?.length) out.deny_read = p.deny_read.map(fill);
  if (p.write?.length) out.write = p.write.map(fill);
  out.network = Array.isArray(p.network) ? [...p.network] : p.network;
  if (p.require) out.require = true;
  return out;
}

/** Pure: hermit.yaml's text with the entry added, or a usage error saying what is in the way. */
export function planAdd(
  text: string,
  file: string,
  dir: string,
  entry: CatalogEntry,
  opts: AddOptions,
  withSandbox = sandboxKnown(),
): AddPlan {
  const before = parseManifest(text, file, dir).manifest;
  const server = opts.as ?? entry.name;
  if (!/^[A-Za-z0-9_-]+$/.test(server)) {
    throw usageError(`--as must be letters, digits, - and _, got '${server}'`);
  }
  if (Object.hasOwn(before.upstreams, server)) {
    throw usageError(
      `${path.basename(file)} already has mcp_servers.${server}; give the new one another name with --as`,
    );
  }
  const unknown = (opts.tools ?? []).filter((t) => !entry.tools.includes(t));
  if (unknown.length) {
    throw usageError(
      `${entry.name} has no tool ${unknown.map((t) => `'${t}'`).join(", ")}; it offers: ${
        entry.tools.join(", ")
      }`,
    );
  }
  const include = opts.tools ?? entry.include;
  if (opts.prefix !== undefined && !/^[A-Za-z0-9_-]*$/.test(opts.prefix)) {
    throw usageError(
      `--prefix must be letters, digits, - and _ (tool names allow no other), got '${opts.prefix}'`,
    );
  }
  const exported = include.map((t) => (opts.prefix ?? "") + t);
  const tooLong = exported.find((n) => !TOOL_NAME.test(n));
  if (tooLong) {
    throw usageError(`--prefix makes '${tooLong}' longer than the 64 characters a tool name may have`);
  }
  const taken = exported.filter((n) => before.exports.tools.includes(n));
  if (taken.length) {
    throw usageError(
      `exports.tools already lists ${
        taken.map((t) => `'${t}'`).join(", ")
      }; add ${entry.name} with --prefix (e.g. --prefix ${
        server.replace(/-/g, "_")
      }_) or name other tools with --tools`,
    );
  }
  let next: string;
  try {
    const created: Created = { containers: [], interiors: {} };
    next = setYaml(
      text,
      ["mcp_servers", server],
      entryJson(entry, opts, withSandbox),
      created,
      path.basename(file),
    );
    next = appendYamlSeq(next, ["exports", "tools"], exported, path.basename(file));
  } catch (err) {
    if (err instanceof EditError) throw new HermitError(`${err.message}`, Exit.usage);
    throw err;
  }
  const loaded = withSandbox && !sandboxKnown() ? undefined : parseManifest(next, file, dir);
  const root = opts.root ?? "${workspaceFolder}";
  const sandbox = policyJson(entry.sandbox, (s) => s.replaceAll("{root}", root));
  return { entry, server, text: next, loaded, exported, sandbox, sandboxWritten: withSandbox };
}
