/**
 * Properties of `parseManifest` over generated input: whatever the text, it returns a manifest or
 * throws a `ManifestError` whose every issue is located (line and column from 1) and whose message
 * is one `file:line:col: message` line per issue; nothing else ever escapes. Manifest-shaped
 * documents with well-typed values always load. Set HERMIT_FC_SEED to replay a failure.
 */
import assert from "node:assert/strict";
import path from "node:path";
import process from "node:process";
import { describe, it } from "node:test";
import fc from "fast-check";
import { stringify } from "yaml";
import { ManifestError, parseManifest } from "../../../src/manifest/load.ts";

const FILE = path.join(process.cwd(), "hermit.yaml");
const seed = process.env.HERMIT_FC_SEED ? Number(process.env.HERMIT_FC_SEED) : undefined;
function params<T>(numRuns: number): fc.Parameters<T> {
  return { numRuns, ...(seed === undefined ? {} : { seed }) };
}
/** Generous: Bun's default 5 s per test is tight for a few hundred parses on a busy machine. */
const SLOW = { timeout: 60_000 };
/** zod's default wording: every message a person sees should be hermit's own. */
const ZOD_JARGON = /Invalid input|Invalid option|Too (small|big)|expected \w+, received/;

type Outcome = { ok: true } | { ok: false; err: ManifestError };

/** The property every input must satisfy; returns the outcome for further checks. */
function wellBehaved(text: string): Outcome {
  let err: unknown;
  try {
    const { manifest } = parseManifest(text, FILE, path.dirname(FILE));
    assert.equal(typeof manifest.name, "string");
    for (const w of manifest.warnings) assertLocated(w, text);
    return { ok: true };
  } catch (e) {
    err = e;
  }
  if (!(err instanceof ManifestError)) {
    throw new Error(`not a ManifestError for ${JSON.stringify(text)}: ${(err as Error)?.stack ?? err}`);
  }
  assert.equal(err.exitCode, 2);
  assert.ok(err.issues.length >= 1);
  for (const issue of err.issues) {
    assertLocated(issue, text);
    // An unknown key is one the text holds, not something the parser made up.
    const key = /^(?:.*\.)?([A-Za-z0-9_]+): unknown key;/.exec(issue.message)?.[1];
    if (key !== undefined) assert.ok(text.includes(key), `${issue.message} for ${JSON.stringify(text)}`);
  }
  const lines = err.message.split("\n");
  assert.equal(lines.length, Math.min(err.issues.length, 21));
  for (const line of lines) assert.match(line, /^.+:\d+:\d+: .+/, `for ${JSON.stringify(text)}`);
  assert.doesNotMatch(err.message, /\n\s+at /);
  return { ok: false, err };
}

function assertLocated(issue: { line: number; col: number; message: string }, text: string): void {
  const where = `${JSON.stringify(issue)} for ${JSON.stringify(text)}`;
  assert.ok(Number.isInteger(issue.line) && issue.line >= 1, where);
  assert.ok(Number.isInteger(issue.col) && issue.col >= 1, where);
  assert.ok(issue.line <= text.split("\n").length + 1, where);
  assert.ok(issue.message.trim().length > 0, where);
  assert.ok(!issue.message.includes("\n"), where);
}

const KEYS = [
  "name",
  "version",
  "description",
  "exports",
  "tools",
  "context",
  "skills",
  "roles",
  "mcp_servers",
]
  .concat([
    "serve",
    "run",
    "command",
    "args",
    "url",
    "env",
    "include",
    "rename",
    "prefix",
    "trust",
    "lifecycle",
  ])
  .concat(["transport", "timeout", "__proto__", "constructor", "<<", "exprots", "a", "x", "fs"]);
const TOKENS = [
  ":",
  ": ",
  " ",
  "  ",
  "    ",
  "\t",
  "\n",
  "\r\n",
  "\r",
  "- ",
  "-",
  "[",
  "]",
  "{",
  "}",
  ",",
  '"',
  "'",
  "&a ",
  "*a",
  "&b ",
  "*b",
  "!!str ",
  "!!map ",
  "!!seq ",
  "!!binary ",
  "!tag ",
  "# c",
  "---",
  "...",
  "? ",
  "|",
  ">-",
  "%YAML 1.2\n",
  "%TAG ! tag:x,2000:\n",
  "é",
  "😀",
  "\u0000",
  "\uFEFF",
  "\u2028",
  "\\",
  "1.0",
  "0x1F",
  "-1",
  ".inf",
  ".nan",
  "1e400",
  "true",
  "null",
  "~",
  "${X}",
  "hermit serve .",
  "https://h/mcp",
  "stdio",
  "http",
  "standalone",
  "session",
  "untrusted",
];

const token = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...KEYS) },
  { weight: 6, arbitrary: fc.constantFrom(...TOKENS) },
  { weight: 1, arbitrary: fc.string({ maxLength: 4, unit: "binary" }) },
);
const yamlish = fc.array(token, { maxLength: 60 }).map((t) => t.join(""));
/** Lines of `indent key: value` — closer to what people write, so deeper paths get exercised. */
const yamlLines = fc.array(
  fc.tuple(
    fc.constantFrom("", "  ", "    ", "      ", "- ", "  - ", "\t"),
    fc.constantFrom(...KEYS),
    fc.constantFrom(": ", ":", " : ", ""),
    fc.array(token, { maxLength: 4 }).map((t) => t.join("")),
  ).map(([indent, key, colon, value]) => `${indent}${key}${colon}${value}`),
  { maxLength: 25 },
).map((lines) => lines.join("\n"));

describe("any text", () => {
  it("random strings: a manifest or a located ManifestError", SLOW, () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200, unit: "binary" }), (s) => void wellBehaved(s)),
      params(400),
    );
  });

  it("YAML-ish token soup: a manifest or a located ManifestError", SLOW, () => {
    fc.assert(fc.property(yamlish, (s) => void wellBehaved(s)), params(600));
  });

  it("YAML-ish lines: a manifest or a located ManifestError", SLOW, () => {
    fc.assert(fc.property(yamlLines, (s) => void wellBehaved(s)), params(600));
  });
});

// Manifest-shaped documents. Each field is either well typed or anything at all.
const toolName = fc.stringMatching(/^[A-Za-z0-9_-]{1,20}$/).filter((n) => n !== "__proto__");
const adapterName = fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,30}$/);
// a segment never starts with a dot: `a/../..` leaves the adapter, and is rightly refused
const relPath = fc.stringMatching(/^[a-z][a-z0-9_]{0,8}(\/[a-z0-9_][a-z0-9_.]{0,7}){0,2}\/?$/);
const text = fc.string({ maxLength: 30 });
const seconds = fc.integer({ min: 1, max: 10_000 });
const strMap = fc.dictionary(fc.stringMatching(/^[A-Z_][A-Z0-9_]{0,10}$/), text, { maxKeys: 3 });

const goodTool = fc.record({
  description: text,
  title: text,
  input: fc.constant({ type: "object", properties: { q: { type: "string" } } }),
  run: fc.array(text, { minLength: 1, maxLength: 4 }),
  read_only: fc.boolean(),
  destructive: fc.boolean(),
  timeout: seconds,
  env: strMap,
  cwd: relPath,
}, { requiredKeys: ["run"] });

const filter = fc.record({
  include: fc.oneof(toolName, fc.array(toolName, { maxLength: 3 })),
  exclude: fc.oneof(toolName, fc.array(toolName, { maxLength: 3 })),
  resources: fc.boolean(),
  prompts: fc.boolean(),
}, { requiredKeys: [] });
const upstreamCommon = {
  env: strMap,
  enabled: fc.boolean(),
  timeout: seconds,
  connect_timeout: seconds,
  keepalive_interval: fc.integer({ min: 5, max: 1000 }),
  lazy: fc.boolean(),
  tools: filter,
  prefix: fc.stringMatching(/^[a-z]{0,4}_?$/),
  trust: fc.constantFrom("full", "untrusted"),
  sampling: fc.record({
    enabled: fc.boolean(),
    max_rpm: fc.nat(100),
    max_tokens_cap: fc.integer({ min: 1, max: 10_000 }),
    allowed_models: fc.array(text, { maxLength: 2 }),
  }, { requiredKeys: [] }),
  elicitation: fc.record({ enabled: fc.boolean(), timeout: seconds }, { requiredKeys: [] }),
};
const goodLocal = fc.record({
  command: fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/),
  args: fc.array(text, { maxLength: 4 }),
  cwd: text,
  idle_timeout_seconds: fc.nat(1000),
  transport: fc.constant("stdio"),
  ...upstreamCommon,
}, { requiredKeys: ["command"] });
const goodRemote = fc.record({
  url: fc.webUrl({ validSchemes: ["http", "https"] }),
  headers: fc.dictionary(fc.stringMatching(/^[A-Za-z-]{1,12}$/), text, { maxKeys: 2 }),
  transport: fc.constantFrom("http", "streamable-http", "sse"),
  auth: fc.constant("oauth"),
  ...upstreamCommon,
}, { requiredKeys: ["url"] });

const goodServe = fc.oneof(
  fc.record({
    transport: fc.constant("stdio"),
    lifecycle: fc.constant("session"),
    command: fc.constantFrom("hermit serve .", "hermit serve . --verbose", "  hermit   serve"),
    health: fc.constant("tools/list"),
  }, { requiredKeys: [] }),
  fc.record({
    transport: fc.constant("http"),
    lifecycle: fc.constant("standalone"),
    host_launch: fc.boolean(),
    instructions: relPath,
    idle_shutdown_seconds: fc.nat(10_000),
    port: fc.integer({ min: 0, max: 65535 }),
    drain_seconds: fc.nat(600),
    stream_seconds: fc.nat(600),
    max_sessions: fc.integer({ min: 1, max: 10_000 }),
    max_connections: fc.integer({ min: 1, max: 10_000 }),
    max_tool_processes: fc.integer({ min: 1, max: 1000 }),
  }, { requiredKeys: [] }),
);

const goodManifest = fc.record({
  name: adapterName,
  version: fc.stringMatching(/^\d{1,2}\.\d{1,2}(\.\d{1,2})?$/),
  description: text,
  exports: fc.record({
    tools: fc.uniqueArray(toolName, { maxLength: 5 }),
    context: relPath,
    skills: relPath,
    roles: relPath,
  }, { requiredKeys: [] }),
  tools: fc.dictionary(toolName, goodTool, { maxKeys: 3 }),
  mcp_servers: fc.dictionary(toolName, fc.oneof(goodLocal, goodRemote), { maxKeys: 3 }),
  serve: goodServe,
}, { requiredKeys: ["name"] });

/** Each field well typed, or (sometimes) replaced by anything, with the odd misspelt key. */
function mangled<T extends Record<string, unknown>>(
  good: fc.Arbitrary<T>,
): fc.Arbitrary<Record<string, unknown>> {
  return fc.tuple(
    good,
    fc.dictionary(fc.constantFrom(...KEYS, "name", "tools", "serve"), fc.anything({ maxDepth: 1 }), {
      maxKeys: 2,
    }),
    fc.func(fc.boolean()),
  ).map(([g, extra, coin]) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(g)) out[k] = coin(k) ? v : mangleDeep(v, coin, k);
    for (const [k, v] of Object.entries(extra)) if (coin(k + "!")) out[k] = v;
    return out;
  });
}

function mangleDeep(v: unknown, coin: (k: string) => boolean, at: string): unknown {
  if (v && typeof v === "object" && !Array.isArray(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      out[k] = coin(`${at}.${k}`) ? x : mangleDeep(x, coin, `${at}.${k}`);
    }
    return out;
  }
  if (Array.isArray(v)) return coin(at + "[]") ? v : [...v, 1, null, { x: [true] }];
  return coin(at + "?") ? 42 : coin(at + "!") ? null : ["a", { b: "c" }];
}

describe("manifest-shaped documents", () => {
  it("well typed: always loads", SLOW, () => {
    fc.assert(
      fc.property(goodManifest, (m) => {
        const yaml = stringify(m);
        const out = wellBehaved(yaml);
        if (!out.ok) assert.fail(`refused:\n${yaml}\n${out.err.message}`);
      }),
      params(400),
    );
  });

  it("some fields wrong or anything: a manifest or a located ManifestError in hermit's words", SLOW, () => {
    fc.assert(
      fc.property(mangled(goodManifest), (m) => {
        const yaml = stringify(m);
        const out = wellBehaved(yaml);
        if (!out.ok) assert.doesNotMatch(out.err.message, ZOD_JARGON, yaml);
      }),
      params(400),
    );
  });

  it("a misspelt key is reported at that key", SLOW, () => {
    const typo = fc.constantFrom("nmae", "exprots", "toosl", "serv", "descripton");
    fc.assert(
      fc.property(goodManifest, typo, fc.nat(), (m, bad, pos) => {
        const entries = Object.entries(m);
        entries.splice(pos % (entries.length + 1), 0, [bad, "x"]);
        const yaml = stringify(Object.fromEntries(entries));
        const out = wellBehaved(yaml);
        assert.ok(!out.ok, yaml);
        const issue = out.err.issues.find((i) => i.path === bad);
        assert.ok(issue, out.err.message);
        const line = yaml.split("\n")[issue.line - 1];
        assert.ok(line.slice(issue.col - 1).startsWith(`${bad}:`), `${issue.line}:${issue.col} in\n${yaml}`);
      }),
      params(300),
    );
  });
});
