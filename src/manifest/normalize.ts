/**
 * From a schema-valid raw manifest to the normalized `Manifest`: defaults, trust folding, and the
 * rules that span fields (one of command/url, lifecycle vs transport; the name and path rules are
 * in `rules.ts`). Returns located errors and warnings; never throws.
 */
import { foldTrust } from "../gates/trust.ts";
import { formatPath, type LocatedIssue, quote, type SourceMap } from "./locate.ts";
import { checkRules } from "./rules.ts";
import { combineSandbox, NO_SANDBOX_SETTINGS, parseSandboxBlock, type SandboxBlock } from "./sandbox.ts";
import type { RawCommandTool, RawManifest, RawUpstream } from "./schema.ts";
import { TOOL_NAME } from "./schema.ts";
import {
  type CommandTool,
  DEFAULTS,
  type Manifest,
  type ServeConfig,
  type Upstream,
  type UpstreamKind,
} from "./types.ts";

export interface Normalized {
  manifest: Manifest;
  errors: LocatedIssue[];
}

export function normalize(raw: RawManifest, src: SourceMap, file: string, dir: string): Normalized {
  const errors: LocatedIssue[] = [];
  const warnings: LocatedIssue[] = [];

  const top = parseSandboxBlock(raw.sandbox, ["sandbox"], src, errors);
  const tools: Record<string, CommandTool> = {};
  for (const [name, t] of Object.entries(raw.tools ?? {})) {
    const own = parseSandboxBlock(t.sandbox, ["tools", name, "sandbox"], src, errors);
    tools[name] = commandTool(name, t, combineSandbox(top, own));
  }

  const upstreams: Record<string, Upstream> = {};
  for (const [name, u] of Object.entries(raw.mcp_servers ?? {})) {
    const at = ["mcp_servers", name];
    const kind = upstreamKind(u, at, src, errors);
    const own = upstreamSandbox(u, kind, at, src, errors);
    upstreams[name] = upstream(name, u, kind ?? "stdio", at, src, errors, warnings);
    if (kind === "stdio") upstreams[name].sandbox = combineSandbox(top, own);
  }

  const exported = raw.exports?.tools ?? [];
  const serve = serveConfig(raw, src, errors, warnings);
  checkRules(raw, src, errors);
  const manifest: Manifest = {
    file,
    dir,
    name: raw.name,
    version: raw.version,
    description: raw.description,
    exports: {
      tools: exported,
      context: raw.exports?.context,
      skills: raw.exports?.skills,
      roles: raw.exports?.roles,
    },
    tools,
    upstreams,
    serve,
    sandbox: combineSandbox(top, undefined),
    warnings,
  };
  return { manifest, errors };
}

/** A remote server is not started by hermit: a `sandbox:` on it is a mistake, said as one. */
function upstreamSandbox(
  u: RawUpstream,
  kind: UpstreamKind | undefined,
  at: string[],
  src: SourceMap,
  errors: LocatedIssue[],
): SandboxBlock | undefined {
  if (u.sandbox !== undefined && kind !== undefined && kind !== "stdio") {
    errors.push(
      src.issue(
        [...at, "sandbox"],
        `${
          at.join(".")
        }.sandbox applies to local (command) servers only; a remote server runs elsewhere, so remove it`,
        { key: true },
      ),
    );
    return undefined;
  }
  return parseSandboxBlock(u.sandbox, [...at, "sandbox"], src, errors);
}

function commandTool(name: string, t: RawCommandTool, sandbox: CommandTool["sandbox"]): CommandTool {
  return {
    name,
    description: t.description ?? "",
    title: t.title,
    inputSchema: t.input ?? { type: "object", properties: {} },
    outputSchema: t.output,
    run: t.run,
    readOnly: t.read_only ?? false,
    destructive: t.destructive,
    idempotent: t.idempotent,
    openWorld: t.open_world,
    timeoutSeconds: t.timeout ?? DEFAULTS.toolTimeoutSeconds,
    env: t.env ?? {},
    cwd: t.cwd,
    sandbox,
  };
}

function upstreamKind(
  u: RawUpstream,
  at: string[],
  src: SourceMap,
  errors: LocatedIssue[],
): UpstreamKind | undefined {
  const where = at.join(".");
  if (u.command !== undefined && u.url !== undefined) {
    const why = `${where} sets both command and url; keep command (a local server) or url (a remote one)`;
    errors.push(src.issue(at, why, { key: true }));
    return undefined;
  }
  if (u.command === undefined && u.url === undefined) {
    const why = `${where} needs command (a local server) or url (a remote one)`;
    errors.push(src.issue(at, why, { key: true }));
    return undefined;
  }
  if (u.command !== undefined) {
    if (u.transport !== undefined && u.transport !== "stdio") {
      errors.push(
        src.issue([...at, "transport"], `${where}.transport must be stdio (or absent) for a command`),
      );
    }
    return "stdio";
  }
  let url: URL | undefined;
  try {
    url = new URL(u.url!);
  } catch {
    url = undefined;
  }
  if (!url || !/^https?:$/.test(url.protocol) || !url.hostname) {
    errors.push(src.issue([...at, "url"], `${where}.url must be an http:// or https:// URL with a host`));
  }
  if (u.transport === "stdio") {
    errors.push(src.issue([...at, "transport"], `${where}.transport must be http or sse for a url`));
  }
  return u.transport === "sse" ? "sse" : "http";
}

function upstream(
  name: string,
  u: RawUpstream,
  kind: UpstreamKind,
  at: string[],
  src: SourceMap,
  errors: LocatedIssue[],
  warnings: LocatedIssue[],
): Upstream {
  const where = at.join(".");
  const trust = foldTrust(u.trust);
  let trustWritten: string | undefined;
  if (u.trust !== undefined && u.trust !== trust) {
    trustWritten = u.trust;
    warnings.push(
      src.issue(
        [...at, "trust"],
        `${where}.trust ${
          quote(u.trust)
        } is not full or untrusted; treated as untrusted (write full or untrusted)`,
      ),
    );
  }
  let keepalive = u.keepalive_interval ?? DEFAULTS.keepaliveSeconds;
  if (keepalive < DEFAULTS.keepaliveFloorSeconds) {
    warnings.push(
      src.issue([...at, "keepalive_interval"], `${where}.keepalive_interval is below 5 s; using 5`),
    );
    keepalive = DEFAULTS.keepaliveFloorSeconds;
  }
  if (kind !== "stdio") {
    for (const key of ["idle_timeout_seconds", "max_lifetime_seconds"] as const) {
      if (u[key]) {
        warnings.push(
          src.issue([...at, key], `${where}.${key} applies to local (command) servers only; ignored`),
        );
      }
    }
  }
  const list = (v: string | string[] | undefined) =>
    v === undefined ? undefined : typeof v === "string" ? [v] : v;
  const rename = u.rename ?? {};
  for (const [rawName, exported] of Object.entries(rename)) {
    if (!TOOL_NAME.test(exported)) {
      errors.push(
        src.issue(
          [...at, "rename", rawName],
          `${
            formatPath([...at, "rename", rawName])
          } must be a tool name of letters, digits, _ or - (at most 64)`,
        ),
      );
    }
  }
  const s = u.sampling ?? {};
  const e = u.elicitation ?? {};
  return {
    name,
    kind,
    command: u.command,
    args: u.args ?? [],
    env: u.env ?? {},
    cwd: u.cwd,
    url: u.url,
    headers: u.headers ?? {},
    enabled: u.enabled ?? true,
    callTimeoutSeconds: u.timeout ?? DEFAULTS.callTimeoutSeconds,
    connectTimeoutSeconds: u.connect_timeout ?? DEFAULTS.connectTimeoutSeconds,
    keepaliveSeconds: keepalive,
    idleTimeoutSeconds: kind === "stdio" ? u.idle_timeout_seconds ?? 0 : 0,
    maxLifetimeSeconds: kind === "stdio" ? u.max_lifetime_seconds ?? 0 : 0,
    lazy: u.lazy ?? false,
    include: list(u.tools?.include),
    exclude: list(u.tools?.exclude) ?? [],
    resources: u.tools?.resources ?? true,
    prompts: u.tools?.prompts ?? true,
    rename,
    prefix: u.prefix ?? "",
    trust,
    readOnlyTools: list(u.read_only_tools) ?? [],
    trustWritten,
    auth: u.auth,
    oauth: {
      clientId: u.oauth?.client_id,
      clientSecret: u.oauth?.client_secret,
      scope: u.oauth?.scope,
      redirectPort: u.oauth?.redirect_port,
      clientName: u.oauth?.client_name,
    },
    sampling: {
      enabled: s.enabled ?? DEFAULTS.sampling.enabled,
      maxRpm: s.max_rpm ?? DEFAULTS.sampling.maxRpm,
      timeoutSeconds: s.timeout ?? DEFAULTS.sampling.timeoutSeconds,
      maxTokensCap: s.max_tokens_cap ?? DEFAULTS.sampling.maxTokensCap,
      maxToolRounds: s.max_tool_rounds ?? DEFAULTS.sampling.maxToolRounds,
      model: s.model,
      allowedModels: s.allowed_models ?? [],
    },
    elicitation: {
      enabled: e.enabled ?? DEFAULTS.elicitation.enabled,
      timeoutSeconds: e.timeout ?? DEFAULTS.elicitation.timeoutSeconds,
    },
    sandbox: NO_SANDBOX_SETTINGS,
  };
}

function serveConfig(
  raw: RawManifest,
  src: SourceMap,
  errors: LocatedIssue[],
  warnings: LocatedIssue[],
): ServeConfig {
  const s = raw.serve ?? {};
  const transport = s.transport ?? (s.lifecycle === "standalone" ? "http" : "stdio");
  const lifecycle = s.lifecycle ?? (transport === "http" ? "standalone" : "session");
  if (transport === "http" && lifecycle === "session") {
    errors.push(
      src.issue(["serve", "lifecycle"], "serve.lifecycle must be standalone when serve.transport is http"),
    );
  }
  if (transport === "stdio" && lifecycle === "standalone") {
    errors.push(
      src.issue(["serve", "transport"], "serve.transport must be http when serve.lifecycle is standalone"),
    );
  }
  const command = s.command ?? "hermit serve .";
  if (!/^hermit\s+serve(\s|$)/.test(command.trim())) {
    errors.push(
      src.issue(
        ["serve", "command"],
        "serve.command must start with 'hermit serve', e.g. command: hermit serve .",
      ),
    );
  }
  // DESIGN.md's own example sets host_launch and instructions on a session adapter: harmless, so
  // worth a word, not a refusal.
  if (lifecycle === "session") {
    for (
      const key of [
        "host_launch",
        "instructions",
        "idle_shutdown_seconds",
        "drain_seconds",
        "stream_seconds",
        "max_sessions",
        "max_connections",
      ] as const
    ) {
      if (s[key] !== undefined) {
        warnings.push(
          src.issue(
            ["serve", key],
            `serve.${key} applies to standalone adapters only; ignored for a session adapter`,
          ),
        );
      }
    }
  }
  return {
    transport,
    command: command.trim(),
    health: s.health ?? "tools/list",
    lifecycle,
    hostLaunch: s.host_launch ?? true,
    instructions: s.instructions,
    idleShutdownSeconds: s.idle_shutdown_seconds ?? DEFAULTS.idleShutdownSeconds,
    port: s.port,
    drainSeconds: s.drain_seconds ?? DEFAULTS.drainSeconds,
    streamSeconds: s.stream_seconds ?? 0,
    maxSessions: s.max_sessions ?? DEFAULTS.maxSessions,
    maxConnections: s.max_connections ?? DEFAULTS.maxConnections,
    maxToolProcesses: s.max_tool_processes ?? DEFAULTS.maxToolProcesses,
  };
}
