/**
 * What a catalog entry (`entries.ts`) says: the package and version it pins, the tools that
 * version offers and which only read, what `hermit add` writes by default (trust tier, include
 * list, environment placeholders) and its sandbox policy, in the manifest's `sandbox:` shape.
 */

/** The manifest's `sandbox:` block (`off`, or what a confined server may also read, write and reach). */
export type SandboxPolicy = "off" | {
  read?: string[];
  deny_read?: string[];
  write?: string[];
  network: "none" | "all" | string[];
  require?: boolean;
};

export interface CatalogEntry {
  /** The catalog name, and the default `mcp_servers` key. */
  name: string;
  summary: string;
  package: string;
  version: string;
  /** Arguments after the package; `{root}` is the directory given with `--root`. */
  args: string[];
  /** Required variables, as `${env:…}` placeholders (`hermit add` never writes a value). */
  env: Record<string, string>;
  /** Variables the server reads when set, for the catalog's description only. */
  optionalEnv?: Record<string, string>;
  trust: "full" | "untrusted";
  /** Every tool the pinned version offers (with hermit's client), in the order it lists them. */
  tools: string[];
  /** The tools that only read (vetted here; a server's own readOnlyHint is never believed). */
  readOnly: string[];
  /** What `hermit add` exports unless `--tools` names others. */
  include: string[];
  sandbox: SandboxPolicy;
  /** Why the policy and the defaults are what they are. */
  notes: string;
}
