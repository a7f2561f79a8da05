/**
 * Gate 3, the description scan, over definitions: every string a host shows the model from a
 * tool, a prompt, a resource or a resource template is scanned with the same rules
 * (scan_text.ts): names, titles and descriptions, and the input and output schemas walked fully
 * (nested `properties`, `items`, `anyOf`/`oneOf`/`allOf`, `$defs`, …), with the strings of
 * `default`, `examples`, `enum`, `const` and any other keyword, and the property names (an
 * identifier is read as words too: `IGNORE_ALL_PREVIOUS_INSTRUCTIONS` and `ignorePreviousRules`
 * are phrases). Findings are
 * reported (logged, listed by `hermit check` and `hermit tools`), never blocking. Pure.
 */
import { type ScanFinding, scanText, visible } from "./scan_text.ts";

export {
  CONCEALMENT_PATTERNS,
  HIDDEN_UNICODE,
  INJECTION_PATTERNS,
  type ScanFinding,
  scanText,
  visible,
} from "./scan_text.ts";

interface Describable {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: unknown;
  outputSchema?: unknown;
  annotations?: { title?: string };
}

/** Schema keywords whose value is one subschema, and those holding a list or a map of them. */
const SUBSCHEMA = [
  "items",
  "additionalProperties",
  "not",
  "if",
  "then",
  "else",
  "contains",
  "propertyNames",
  "unevaluatedProperties",
  "unevaluatedItems",
  "additionalItems",
  "contentSchema",
];
const SUBSCHEMA_LISTS = ["anyOf", "oneOf", "allOf", "prefixItems"];
const SUBSCHEMA_MAPS = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
/** Maps whose keys are property names (their paths read `parent.name`, not `parent$defs.name`). */
const NAMED = ["properties", "patternProperties"];
/**
 * Every keyword of JSON Schema (2020-12 back to draft-04, and OpenAPI's `nullable`): any other key
 * of a schema is text a server chose, and is scanned as a name.
 */
const KEYWORDS = new Set([
  ...SUBSCHEMA,
  ...SUBSCHEMA_LISTS,
  ...SUBSCHEMA_MAPS,
  ..."description title type enum const default examples format pattern multipleOf".split(" "),
  ..."minimum maximum exclusiveMinimum exclusiveMaximum minLength maxLength".split(" "),
  ..."minItems maxItems uniqueItems minContains maxContains minProperties maxProperties".split(" "),
  ..."required dependentRequired dependencies contentEncoding contentMediaType".split(" "),
  ..."deprecated readOnly writeOnly nullable id $id $schema $ref $anchor $comment".split(" "),
  ..."$dynamicRef $dynamicAnchor $recursiveRef $recursiveAnchor $vocabulary".split(" "),
]);
/** How deep subschemas are walked; below, a schema's strings are still read, and the depth is a finding. */
const MAX_SCHEMA_DEPTH = 1000;

/** One finding per rule, the first. */
function firstPerRule(findings: ScanFinding[]): ScanFinding[] {
  const out = new Map<string, ScanFinding>();
  for (const f of findings) if (!out.has(f.rule)) out.set(f.rule, f);
  return [...out.values()];
}

/**
 * Every string in a value, keys included, in order and at any depth (iterative, so depth is no
 * risk; each object once).
 */
function stringsIn(value: unknown): string[] {
  const texts: string[] = [];
  const seen = new Set<object>();
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === "string") texts.push(v);
    else if (v && typeof v === "object" && !seen.has(v)) {
      seen.add(v);
      const entries = Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) {
        stack.push(entries[i][1]);
        if (!Array.isArray(v)) stack.push(entries[i][0]);
      }
    }
  }
  return texts;
}

/** Every string in a value (`default`, `examples`, `enum`, `const`, …): one finding per rule. */
function scanStrings(where: string, value: unknown): ScanFinding[] {
  return firstPerRule(stringsIn(value).flatMap((t) => scanText(where, t)));
}

/** A JSON Schema walked fully: `prefix` is e.g. `tool read_file parameter`. */
function scanSchema(prefix: string, schema: unknown): ScanFinding[] {
  const out: ScanFinding[] = [];
  const seen = new Set<unknown>();
  let tooDeep = false;
  const walk = (node: unknown, path: string, depth: number): void => {
    const at = path || "(schema)";
    if (typeof node === "string" || Array.isArray(node)) {
      out.push(...scanStrings(`${prefix} ${at}`, node));
      return;
    }
    if (!node || typeof node !== "object" || seen.has(node)) return;
    if (depth >= MAX_SCHEMA_DEPTH) {
      const rule = `schema nested deeper than ${MAX_SCHEMA_DEPTH} levels`;
      if (!tooDeep) out.push({ where: prefix, rule, excerpt: at.length > 200 ? `…${at.slice(-199)}` : at });
      tooDeep = true;
      out.push(...scanStrings(`${prefix} (below ${MAX_SCHEMA_DEPTH} levels)`, node));
      return;
    }
    seen.add(node);
    const s = node as Record<string, unknown>;
    out.push(...scanStrings(`${prefix} ${at}`, s.description));
    out.push(...scanStrings(`${prefix} ${at}`, s.title));
    for (const [key, value] of Object.entries(s)) {
      if (key === "description" || key === "title") continue;
      if (!KEYWORDS.has(key)) out.push(...scanText(`${prefix} ${at} keyword`, key));
      if (SUBSCHEMA_MAPS.includes(key) && value && typeof value === "object" && !Array.isArray(value)) {
        for (const [k, v] of Object.entries(value)) {
          const name = visible(k);
          const inner = NAMED.includes(key) ? (path ? `${path}.${name}` : name) : `${path}${key}.${name}`;
          out.push(...scanText(`${prefix} name ${inner}`, k));
          walk(v, inner, depth + 1);
        }
      } else if (SUBSCHEMA.includes(key) || SUBSCHEMA_LISTS.includes(key)) {
        const items = key === "items" || key === "prefixItems" || key === "additionalItems";
        for (const x of Array.isArray(value) ? value : [value]) {
          walk(x, items ? `${path}[]` : path, depth + 1);
        }
      } else out.push(...scanStrings(`${prefix} ${at} ${visible(key)}`, value));
    }
  };
  walk(schema, "", 0);
  return out;
}

/** A tool: its name, description and titles, and its input and output schemas walked fully. */
export function scanTool(tool: Describable, label = `tool ${visible(tool.name)}`): ScanFinding[] {
  return [
    ...scanText(label, tool.description),
    ...scanText(`${label} title`, tool.title),
    ...scanText(`${label} title`, tool.annotations?.title),
    ...scanText(`${label} name`, tool.name),
    ...scanSchema(`${label} parameter`, tool.inputSchema),
    ...scanSchema(`${label} output`, tool.outputSchema),
  ];
}

interface PromptDefinition {
  name: string;
  title?: string;
  description?: string;
  arguments?: { name: string; title?: string; description?: string }[];
}

/** A prompt: its name, title and description, and each argument's. */
export function scanPrompt(prompt: PromptDefinition): ScanFinding[] {
  const label = `prompt ${visible(prompt.name)}`;
  return [
    ...scanText(label, prompt.description),
    ...scanText(`${label} title`, prompt.title),
    ...scanText(`${label} name`, prompt.name),
    ...(prompt.arguments ?? []).flatMap((a) => {
      const arg = `${label} argument ${visible(a.name)}`;
      return [
        ...scanText(arg, a.description),
        ...scanText(`${arg} title`, a.title),
        ...scanText(`${arg} name`, a.name),
      ];
    }),
  ];
}

interface ResourceDefinition {
  name: string;
  title?: string;
  description?: string;
  uri?: string;
  uriTemplate?: string;
}

/** A resource or a resource template: its name, title, description and URI. */
export function scanResource(r: ResourceDefinition): ScanFinding[] {
  const label = `resource ${r.uriTemplate !== undefined ? "template " : ""}${visible(r.name)}`;
  return [
    ...scanText(label, r.description),
    ...scanText(`${label} title`, r.title),
    ...scanText(`${label} name`, r.name),
    ...scanText(`${label} uri`, r.uri ?? r.uriTemplate),
  ];
}
