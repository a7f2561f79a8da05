/**
 * A tool's definition as the lock sees it: the fields that decide what a host reads, shows and
 * sends (name, title, description, input and output schema, annotations, icons and `_meta`, where
 * an MCP Apps host finds the UI template it renders), in a canonical JSON
 * (keys sorted at every level, no whitespace, absent fields left out) and its SHA-256. Two
 * definitions hash alike exactly when they say the same thing, whatever order a server sends
 * its keys in. Pure; no dependency beyond a SHA-256 (`platform/sha256.ts`), so the lean relay can load it.
 */
import { sha256Hex } from "../platform/sha256.ts";

/**
 * The hashed part of an MCP tool. Only `execution` (task support, which the SDK adds to every tool
 * it registers) is not locked. Icons and `_meta` count only where a server sends them, so a tool
 * without them hashes as it did before they were locked.
 */
export interface ToolDefinition {
  name: string;
  title?: unknown;
  description?: unknown;
  inputSchema?: unknown;
  outputSchema?: unknown;
  annotations?: unknown;
  icons?: unknown;
  _meta?: unknown;
}

export const DEFINITION_FIELDS = [
  "name",
  "title",
  "description",
  "inputSchema",
  "outputSchema",
  "annotations",
  "icons",
  "_meta",
] as const;

export type DefinitionField = typeof DEFINITION_FIELDS[number];

/** The locked fields of a tool as an upstream sent it (its own name, before any rename). */
export function definitionOf(tool: { name: string } & Record<string, unknown>): ToolDefinition {
  const out: Record<string, unknown> = {};
  for (const f of DEFINITION_FIELDS) if (tool[f] !== undefined) out[f] = tool[f];
  return out as unknown as ToolDefinition;
}

/** JSON with object keys sorted (UTF-16 code unit order) at every level; undefined members dropped. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) {
    return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(",")}]`;
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(",")}}`;
}

/** `sha256:<64 hex>` of the canonical JSON of a definition. */
export function hashDefinition(def: ToolDefinition): string {
  return "sha256:" + sha256Hex(canonicalJson(definitionOf(def as never)));
}
