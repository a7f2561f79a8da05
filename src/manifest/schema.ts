/**
 * The shape of `hermit.yaml` (DESIGN.md section 1) as zod schemas. Messages here are written for
 * a person reading one line: they name the field and say what to write instead. Defaults and
 * normalization (trust, filters) happen in `normalize.ts`, not here.
 */
import { z } from "zod";

export const ADAPTER_NAME = /^[a-z0-9][a-z0-9-]*$/;
export const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
export const SERVER_NAME = /^[A-Za-z0-9_-]{1,64}$/;

const str = (what: string) => z.string({ error: `must be ${what}` });
const bool = z.boolean({ error: "must be true or false" });
const mapping = (what: string) => ({ error: `must be a mapping of ${what}` });
/** The longest a timer waits (2^31 - 1 ms): past it, it fires at once (a 30-day timeout, at once). */
const MAX_SECONDS = 2147483;
const atMost = { error: `must be at most ${MAX_SECONDS} seconds (about 24.8 days)` };
const seconds = z.number({ error: "must be a number of seconds" }).nonnegative({
  error: "must be zero or more seconds",
}).max(MAX_SECONDS, atMost);
const positiveSeconds = z.number({ error: "must be a number of seconds" }).positive({
  error: "must be more than 0 seconds",
}).max(MAX_SECONDS, atMost);
const count = (what: string, min: number) =>
  z.number({ error: `must be a number of ${what}` }).int({ error: `must be a whole number of ${what}` })
    .min(min, { error: `must be ${min} or more ${what}` });
const port = (min: number) =>
  z.number({ error: "must be a port number" }).int({ error: "must be a whole port number" })
    .min(min, { error: `must be a port number from ${min} to 65535` })
    .max(65535, { error: `must be a port number from ${min} to 65535` });
const stringList = z.array(z.string({ error: "must be a string" }), { error: "must be a list of strings" });
const stringMap = z.record(z.string(), z.string({ error: "must be a string (quote numbers and booleans)" }), {
  error: "must be a mapping of names to strings",
});
/** Hermes accepts a single string where a list is meant (`include: read_file`). */
const oneOrMany = z.union([z.string(), stringList], { error: "must be a name, a glob, or a list of them" });

const jsonSchemaObject = z.record(z.string(), z.unknown(), {
  error: "must be a JSON Schema object, e.g. { type: object, properties: { text: { type: string } } }",
});

export const commandToolSchema = z.strictObject({
  description: str("a string").optional(),
  title: str("a string").optional(),
  input: jsonSchemaObject.optional(),
  output: jsonSchemaObject.optional(),
  run: z.array(z.string({ error: "must be a string" }), {
    error: "must be a list of strings, e.g. run: [python3, tools/add_note.py]",
  }).min(1, { error: "must name a program to run, e.g. run: [python3, tools/add_note.py]" }),
  read_only: bool.optional(),
  destructive: bool.optional(),
  idempotent: bool.optional(),
  open_world: bool.optional(),
  timeout: positiveSeconds.optional(),
  env: stringMap.optional(),
  cwd: str("a directory path relative to the adapter").optional(),
  /** Checked in `sandbox.ts` (off, or a mapping), for messages a union cannot give. */
  sandbox: z.unknown().optional(),
}, mapping("command tool fields, e.g. { description: …, run: [python3, tools/add_note.py] }"));

const toolFilterSchema = z.strictObject({
  include: oneOrMany.optional(),
  exclude: oneOrMany.optional(),
  resources: bool.optional(),
  prompts: bool.optional(),
}, mapping("filter fields, e.g. tools: { include: [read_file] }"));

const samplingSchema = z.strictObject({
  enabled: bool.optional(),
  max_rpm: count("requests per minute", 0).optional(),
  timeout: seconds.optional(),
  max_tokens_cap: count("tokens", 1).optional(),
  max_tool_rounds: count("rounds", 0).optional(),
  model: str("a model name").optional(),
  allowed_models: stringList.optional(),
}, mapping("sampling fields, e.g. sampling: { enabled: false }"));

const elicitationSchema = z.strictObject({
  enabled: bool.optional(),
  timeout: seconds.optional(),
}, mapping("elicitation fields, e.g. elicitation: { enabled: false }"));

const oauthSchema = z.strictObject({
  client_id: str("a string").optional(),
  client_secret: str("a string").optional(),
  scope: str("a string").optional(),
  redirect_port: port(1).optional(),
  client_name: str("a string").optional(),
  issuer: str("the authorization server's URL, e.g. issuer: https://login.example.com")
    .refine((v) => /^https?:\/\/[^/]/.test(v), "must be an https URL, e.g. issuer: https://login.example.com")
    .optional(),
}, mapping("OAuth fields, e.g. oauth: { scope: read }"));

export const upstreamSchema = z.strictObject({
  command: str("a program name or path, e.g. command: npx").optional(),
  args: z.array(z.string({ error: "must be a string (quote numbers)" }), {
    error: 'must be a list of strings, e.g. args: [-y, "@modelcontextprotocol/server-memory"]',
  }).optional(),
  env: stringMap.optional(),
  cwd: str("a directory path").optional(),
  url: str("an http:// or https:// URL").optional(),
  headers: stringMap.optional(),
  transport: z.enum(["stdio", "http", "streamable-http", "sse"], {
    error: "must be one of: stdio, http, sse",
  }).optional(),
  enabled: bool.optional(),
  timeout: positiveSeconds.optional(),
  connect_timeout: positiveSeconds.optional(),
  keepalive_interval: seconds.optional(),
  idle_timeout_seconds: seconds.optional(),
  max_lifetime_seconds: seconds.optional(),
  lazy: bool.optional(),
  tools: toolFilterSchema.optional(),
  rename: z.record(z.string(), z.string({ error: "must be the exported name (a string)" }), {
    error: "must map upstream tool names to exported names, e.g. rename: { read_file: fs_read }",
  }).optional(),
  prefix: str("a string").optional(),
  trust: z.string({ error: "must be full or untrusted" }).optional(),
  read_only_tools: z.union([z.string(), stringList], {
    error:
      "must be a tool name, a glob, or a list of them (the server's own names), e.g. read_only_tools: [read_*]",
  }).optional(),
  auth: z.enum(["oauth"], { error: "must be oauth (put static tokens in headers:)" }).optional(),
  oauth: oauthSchema.optional(),
  sampling: samplingSchema.optional(),
  elicitation: elicitationSchema.optional(),
  sandbox: z.unknown().optional(),
}, mapping("server fields, e.g. { command: npx, args: [-y, some-server] } or { url: https://… }"));

export const serveSchema = z.strictObject({
  transport: z.enum(["stdio", "http"], { error: "must be stdio or http" }).optional(),
  command: str("the line a host runs, e.g. command: hermit serve .").optional(),
  health: z.enum(["tools/list"], { error: "must be tools/list" }).optional(),
  lifecycle: z.enum(["session", "standalone"], { error: "must be session or standalone" }).optional(),
  host_launch: bool.optional(),
  instructions: str("a file in the adapter, e.g. instructions: SERVICE.md").optional(),
  idle_shutdown_seconds: seconds.optional(),
  port: port(0).optional(),
  drain_seconds: seconds.optional(),
  stream_seconds: seconds.optional(),
  max_sessions: count("sessions", 1).optional(),
  max_connections: count("connections", 1).optional(),
  max_tool_processes: count("processes", 1).optional(),
}, mapping("serve fields, e.g. serve: { command: hermit serve . }"));

export const exportsSchema = z.strictObject({
  tools: z.array(
    z.string({ error: "must be a tool name" }).regex(TOOL_NAME, {
      error: "must be a tool name of letters, digits, _ or - (at most 64)",
    }),
    { error: "must be a list of tool names, e.g. tools: [add_note, search_notes]" },
  ).optional(),
  context: str("a file in the adapter, e.g. context: CONTEXT.md").optional(),
  skills: str("a directory in the adapter, e.g. skills: skills/").optional(),
  roles: str("a directory in the adapter, e.g. roles: roles/").optional(),
}, mapping("what the adapter exports, e.g. exports: { tools: [add_note] }"));

export const manifestSchema = z.strictObject({
  name: z.string({ error: "must be a string, e.g. name: notes" }).regex(ADAPTER_NAME, {
    error: "must be lowercase letters, digits and dashes, starting with a letter or digit, e.g. name: notes",
  }).max(64, { error: "must be at most 64 characters" }),
  version: z.string({ error: 'must be a string; quote it, e.g. version: "1.0"' }).optional(),
  description: str("a string").optional(),
  exports: exportsSchema.optional(),
  tools: z.record(
    z.string().regex(TOOL_NAME, {
      error: "is not a usable tool name; use letters, digits, _ or - (at most 64)",
    }),
    commandToolSchema,
    { error: "must be a mapping of tool names to command tools" },
  ).optional(),
  mcp_servers: z.record(
    z.string().regex(SERVER_NAME, {
      error: "is not a usable server name; use letters, digits, _ or - (at most 64)",
    }),
    upstreamSchema,
    { error: "must be a mapping of server names to servers" },
  ).optional(),
  serve: serveSchema.optional(),
  sandbox: z.unknown().optional(),
}, { error: "the manifest must be a mapping of keys (name:, exports:, tools:, mcp_servers:, serve:)" });

export type RawManifest = z.output<typeof manifestSchema>;
export type RawCommandTool = z.output<typeof commandToolSchema>;
export type RawUpstream = z.output<typeof upstreamSchema>;

/** Every key the schema knows, per position, for "did you mean" suggestions. */
export function knownKeys(path: (string | number)[]): string[] {
  const shapeAt = (schema: z.ZodType, rest: (string | number)[]): string[] => {
    let s: z.ZodType = schema;
    for (const seg of rest) {
      s = unwrap(s);
      if (s instanceof z.ZodObject) {
        const next = (s.shape as Record<string, z.ZodType>)[String(seg)];
        if (!next) return [];
        s = next;
      } else if (s instanceof z.ZodRecord) {
        s = s.valueType as unknown as z.ZodType;
      } else if (s instanceof z.ZodArray) {
        s = s.element as unknown as z.ZodType;
      } else return [];
    }
    s = unwrap(s);
    return s instanceof z.ZodObject ? Object.keys(s.shape) : [];
  };
  return shapeAt(manifestSchema, path);
}

function unwrap(s: z.ZodType): z.ZodType {
  while (s instanceof z.ZodOptional || s instanceof z.ZodDefault) s = s.unwrap() as z.ZodType;
  return s;
}
