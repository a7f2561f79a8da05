/**
 * From a schema-valid raw manifest to the normalized `Manifest`: defaults, command tools, the serve
 * block and the rules that span its fields (lifecycle vs transport, the serve command). Each
 * `mcp_servers` entry (one of command/url, trust folding) is normalized in `upstream.ts`, the
 * `sandbox:` blocks in `sandbox.ts`, the name and path rules are in `rules.ts`. Returns located
 * errors and warnings; never throws.
 */
import type { LocatedIssue, SourceMap } from "./locate.ts";
import { checkRules } from "./rules.ts";
import { combineSandbox, parseSandboxBlock } from "./sandbox.ts";
import type { RawCommandTool, RawManifest } from "./schema.ts";
import { type CommandTool, DEFAULTS, type Manifest, type ServeConfig, type Upstream } from "./types.ts";
import { normalizeUpstream } from "./mcp_server.ts";
import { checkToolSchemas } from "./tool_schemas.ts";

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
  checkToolSchemas(raw.tools ?? {}, src, errors);

  const upstreams: Record<string, Upstream> = {};
  for (const [name, u] of Object.entries(raw.mcp_servers ?? {})) {
    upstreams[name] = normalizeUpstream(name, u, top, src, errors, warnings);
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
