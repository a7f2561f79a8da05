/**
 * A changed tool definition as a person reads it in a terminal or a CI log: text fields as a
 * word diff (`[-removed-]{+added+}`, hidden characters made visible), schemas and annotations as
 * the key paths added, removed or changed with their values. Pure.
 */
import { diffWords } from "diff";
import { visible } from "../gates/scan.ts";
import { own } from "../platform/own.ts";
import { canonicalJson, DEFINITION_FIELDS, type ToolDefinition } from "./definition.ts";
import { keyChanges } from "./verdict.ts";

const VALUE_MAX = 120;

/** Lines (without indentation) showing how `before` became `after`. */
export function definitionDiff(before: ToolDefinition, after: ToolDefinition): string[] {
  const out: string[] = [];
  const b = before as unknown as Record<string, unknown>;
  const a = after as unknown as Record<string, unknown>;
  for (const field of DEFINITION_FIELDS) {
    if (canonicalJson(b[field]) === canonicalJson(a[field])) continue;
    if (typeof b[field] === "string" || typeof a[field] === "string") {
      out.push(`${field}: ${wordDiff(text(b[field]), text(a[field]))}`);
      continue;
    }
    const { added, removed, changed } = keyChanges(b[field], a[field]);
    out.push(`${field}:`);
    for (const p of added) out.push(`  + ${visible(p)}: ${value(at(a[field], p))}`);
    for (const p of removed) out.push(`  - ${visible(p)}: ${value(at(b[field], p))}`);
    for (const p of changed) {
      out.push(`  ~ ${visible(p)}: ${value(at(b[field], p))} → ${value(at(a[field], p))}`);
    }
  }
  return out;
}

/** An added tool in brief, for review: its text and the names of its parameters (the rest is in the lock). */
export function definitionLines(def: ToolDefinition): string[] {
  const d = def as unknown as Record<string, unknown>;
  const text = (["title", "description"] as const).filter((f) => typeof d[f] === "string").map((f) =>
    `${f}: ${JSON.stringify(visible(d[f] as string))}`
  );
  const props = (d.inputSchema as { properties?: Record<string, unknown> } | undefined)?.properties;
  const params = props && typeof props === "object" ? Object.keys(props) : [];
  return [...text, `parameters: ${params.length ? params.map(visible).join(", ") : "none"}`];
}

export function wordDiff(before: string, after: string): string {
  return diffWords(before, after).map((p) =>
    p.added ? `{+${visible(p.value)}+}` : p.removed ? `[-${visible(p.value)}-]` : visible(p.value)
  ).join("");
}

function text(v: unknown): string {
  return typeof v === "string" ? v : v === undefined ? "" : canonicalJson(v);
}

function at(root: unknown, p: string): unknown {
  if (p === "(all)") return root;
  let v = root;
  for (const k of p.split(".")) {
    v = v && typeof v === "object" ? own(v as Record<string, unknown>, k) : undefined;
  }
  return v;
}

function value(v: unknown, max = VALUE_MAX): string {
  const s = visible(canonicalJson(v));
  return s.length > max ? s.slice(0, max) + "…" : s;
}
