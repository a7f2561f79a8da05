/**
 * Gate 3, the description scan, over definitions: every string a host shows the model from a
 * tool, a prompt, a resource or a resource template is scanned with the same rules
 * (scan_text.ts): names, titles and descriptions, and the input and output schemas walked fully
 * (nested `properties`, `items`, `anyOf`/`oneOf`/`allOf`, `$defs`, …), with the strings of
 * `default`, `examples`, `enum`, `const` and any other keyword, and the property names (read as
 * words: `IGNORE_ALL_PREVIOUS_INSTRUCTIONS` and `ignorePreviousRules` are phrases). Findings are
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
/** Maps whose keys are property names a host shows. */
const NAMED = ["properties", "patternProperties"];
/** How deep the strings of a value (`default: {…}`) are searched. */
const MAX_VALUE_DEPTH = 8;

/** A name read as words (`IGNORE_ALL_PREVIOUS`, `ignorePrevious`, `ignore-previous`), then scanned. */
export function scanName(where: string, name: string | undefined): ScanFinding[] {
  if (!name) return [];
  return scanText(where, name.replace(/[_\-.]+/g, " ").replace(/(\p{Ll})(\p{Lu})/gu, "$1 $2"));
}

/** Every string in a value, keys included (`default`, `examples`, `enum`, `const`, …): one finding per rule. */
function scanStrings(where: string, value: unknown): ScanFinding[] {
  const texts: string[] = [];
  const collect = (v: unknown, depth: number): void => {
    if (typeof v === "string") texts.push(v);
    else if (v && typeof v === "object" && depth < MAX_VALUE_DEPTH) {
      for (const [k, x] of Object.entries(v)) {
        if (!Array.isArray(v)) texts.push(k);
        collect(x, depth + 1);
      }
    }
  };
  collect(value, 0);
  const out = new Map<string, ScanFinding>();
  for (const f of texts.flatMap((t) => scanText(where, t))) if (!out.has(f.rule)) out.set(f.rule, f);
  return [...out.values()];
}

/** A JSON Schema walked fully: `prefix` is e.g. `tool read_file parameter`. */
function scanSchema(prefix: string, schema: unknown): ScanFinding[] {
  const out: ScanFinding[] = [];
  const seen = new Set<unknown>();
  const walk = (node: unknown, path: string): void => {
    if (!node || typeof node !== "object" || Array.isArray(node) || seen.has(node)) return;
    seen.add(node);
    const s = node as Record<string, unknown>;
    const at = path || "(schema)";
    if (typeof s.description === "string") out.push(...scanText(`${prefix} ${at}`, s.description));
    if (typeof s.title === "string") out.push(...scanText(`${prefix} ${at}`, s.title));
    for (const [key, value] of Object.entries(s)) {
      if (key === "description" || key === "title") continue;
      if (SUBSCHEMA_MAPS.includes(key) && value && typeof value === "object" && !Array.isArray(value)) {
        for (const [k, v] of Object.entries(value)) {
          const name = visible(k);
          const inner = NAMED.includes(key) ? (path ? `${path}.${name}` : name) : `${path}${key}.${name}`;
          if (NAMED.includes(key)) out.push(...scanName(`${prefix} name ${inner}`, k));
          walk(v, inner);
        }
      } else if (SUBSCHEMA.includes(key) || SUBSCHEMA_LISTS.includes(key)) {
        const items = key === "items" || key === "prefixItems" || key === "additionalItems";
        for (const x of Array.isArray(value) ? value : [value]) walk(x, items ? `${path}[]` : path);
      } else out.push(...scanStrings(`${prefix} ${at} ${key}`, value));
    }
  };
  walk(schema, "");
  return out;
}

/** A tool: its name, description and titles, and its input and output schemas walked fully. */
export function scanTool(tool: Describable, label = `tool ${visible(tool.name)}`): ScanFinding[] {
  return [
    ...scanText(label, tool.description),
    ...scanText(`${label} title`, tool.title),
    ...scanText(`${label} title`, tool.annotations?.title),
    ...scanName(`${label} name`, tool.name),
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
    ...scanName(`${label} name`, prompt.name),
    ...(prompt.arguments ?? []).flatMap((a) => {
      const arg = `${label} argument ${visible(a.name)}`;
      return [
        ...scanText(arg, a.description),
        ...scanText(`${arg} title`, a.title),
        ...scanName(`${arg} name`, a.name),
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
    ...scanName(`${label} name`, r.name),
    ...scanText(`${label} uri`, r.uri ?? r.uriTemplate),
  ];
}
