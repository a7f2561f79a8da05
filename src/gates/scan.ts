/**
 * Gate 3, the description scan: tool, parameter and prompt descriptions and the server's
 * `initialize.instructions` are searched for prompt-injection phrasing (the ten Hermes patterns),
 * concealment phrasing and hidden Unicode (TAG block, bidi controls, zero-width characters).
 * Findings are reported, never blocking. Pure.
 */

/** Hermes's `_MCP_INJECTION_PATTERNS`, in its order. */
export const INJECTION_PATTERNS: readonly RegExp[] = [
  /ignore\s+(all\s+)?previous\s+instructions/i,
  /you\s+are\s+now\s+a/i,
  /your\s+new\s+(task|role|instructions?)\s+(is|are)/i,
  /system\s*:\s*/i,
  /<\s*(system|human|assistant)\s*>/i,
  /do\s+not\s+(tell|inform|mention|reveal)/i,
  /(curl|wget|fetch)\s+https?:\/\//i,
  /base64\.(b64decode|decodebytes)/i,
  /exec\s*\(|eval\s*\(/i,
  /import\s+(subprocess|os|shutil|socket)/i,
];

/** Concealment phrasing beyond Hermes's "do not tell". */
export const CONCEALMENT_PATTERNS: readonly RegExp[] = [
  /\b(?:don'?t|do\s+not|never)\s+(?:let|show|alert|notify|warn)\s+the\s+user/i,
  /without\s+(?:telling|informing|notifying|alerting|asking)\s+the\s+user/i,
  /\bthe\s+user\s+(?:must|should)\s+(?:not|never)\s+(?:know|see|be\s+told)/i,
  /\bkeep\s+(?:this|it)\s+(?:a\s+)?(?:secret|hidden|confidential)\b/i,
  /\bhide\s+(?:this|it)\s+from\s+the\s+user/i,
  /\b(?:secretly|silently|quietly|covertly)\s+(?:send|forward|upload|exfiltrate|include|append|copy|read)/i,
];

export const HIDDEN_UNICODE: readonly { name: string; pattern: RegExp }[] = [
  { name: "Unicode TAG characters", pattern: /[\u{E0000}-\u{E007F}]/u },
  { name: "bidirectional control characters", pattern: /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/u },
  { name: "zero-width characters", pattern: /[\u200B-\u200D\u2060\u2061-\u2064\uFEFF\u180E]/u },
  { name: "variation selectors (supplement)", pattern: /[\u{E0100}-\u{E01EF}]/u },
];

export interface ScanFinding {
  /** Where: e.g. `tool read_file`, `tool read_file parameter path`, `instructions`. */
  where: string;
  /** Which rule matched. */
  rule: string;
  /** About 200 characters around the match, hidden characters made visible. */
  excerpt: string;
}

const EXCERPT = 200;

export function scanText(where: string, text: string | undefined): ScanFinding[] {
  if (!text) return [];
  const out: ScanFinding[] = [];
  const hit = (rule: string, index: number) => out.push({ where, rule, excerpt: excerpt(text, index) });
  INJECTION_PATTERNS.forEach((re, i) => {
    const m = re.exec(text);
    if (m) hit(`injection pattern ${i + 1} (${re.source})`, m.index);
  });
  for (const re of CONCEALMENT_PATTERNS) {
    const m = re.exec(text);
    if (m) hit(`concealment phrasing (${m[0]})`, m.index);
  }
  for (const { name, pattern } of HIDDEN_UNICODE) {
    const m = pattern.exec(text);
    if (m) hit(`hidden ${name}`, m.index);
  }
  return out;
}

function excerpt(text: string, index: number): string {
  const start = Math.max(0, index - 60);
  const slice = text.slice(start, start + EXCERPT);
  return (start > 0 ? "…" : "") + visible(slice) + (start + EXCERPT < text.length ? "…" : "");
}

/** Any of the HIDDEN_UNICODE characters. */
const ANY_HIDDEN = new RegExp(HIDDEN_UNICODE.map((h) => h.pattern.source).join("|"), "gu");

/** Hidden characters as `<U+XXXX>` so a log reader can see them. */
export function visible(s: string): string {
  return s.replace(
    ANY_HIDDEN,
    (c) => `<U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}>`,
  ).replace(/\s+/g, " ");
}

interface Describable {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: unknown;
  annotations?: { title?: string };
}

/** Schema keywords whose value is one subschema, and those holding a list or a map of them. */
const SUBSCHEMA = ["items", "additionalProperties", "not", "if", "then", "else", "contains"];
const SUBSCHEMA_LISTS = ["anyOf", "oneOf", "allOf", "prefixItems"];
const SUBSCHEMA_MAPS = ["properties", "patternProperties", "$defs", "definitions"];

/** A tool's description and title and every description and title inside its input schema. */
export function scanTool(tool: Describable, label = `tool ${tool.name}`): ScanFinding[] {
  const out = [
    ...scanText(label, tool.description),
    ...scanText(`${label} title`, tool.title),
    ...scanText(`${label} title`, tool.annotations?.title),
  ];
  const seen = new Set<unknown>();
  const walk = (schema: unknown, path: string): void => {
    if (!schema || typeof schema !== "object" || seen.has(schema)) return;
    seen.add(schema);
    const s = schema as Record<string, unknown>;
    const at = path || "(schema)";
    if (typeof s.description === "string") out.push(...scanText(`${label} parameter ${at}`, s.description));
    if (typeof s.title === "string") out.push(...scanText(`${label} parameter ${at}`, s.title));
    for (const key of SUBSCHEMA_MAPS) {
      const map = s[key];
      if (!map || typeof map !== "object" || Array.isArray(map)) continue;
      for (const [k, v] of Object.entries(map)) {
        walk(v, key === "properties" ? (path ? `${path}.${k}` : k) : `${path}${key}.${k}`);
      }
    }
    for (const key of SUBSCHEMA) {
      if (Array.isArray(s[key])) (s[key] as unknown[]).forEach((x) => walk(x, `${path}[]`));
      else walk(s[key], key === "items" ? `${path}[]` : path);
    }
    for (const key of SUBSCHEMA_LISTS) {
      if (Array.isArray(s[key])) (s[key] as unknown[]).forEach((x) => walk(x, path));
    }
  };
  walk(tool.inputSchema, "");
  return out;
}

export function scanPrompt(
  prompt: { name: string; description?: string; arguments?: { name: string; description?: string }[] },
): ScanFinding[] {
  const label = `prompt ${prompt.name}`;
  return [
    ...scanText(label, prompt.description),
    ...(prompt.arguments ?? []).flatMap((a) => scanText(`${label} argument ${a.name}`, a.description)),
  ];
}
