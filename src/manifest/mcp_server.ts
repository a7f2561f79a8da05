/**
 * One `mcp_servers` entry, from schema-valid raw to the normalized `Upstream`: its kind from
 * command/url/transport (exactly one of command or url; a URL is http(s) with a host), a
 * `sandbox:` on a remote server refused, trust folded to full or untrusted, defaults and floors
 * (keepalive), settings that apply to local servers only ignored on a remote one, and `rename`
 * targets that must be tool names. Located errors and warnings go to the caller's lists.
 */
import { foldTrust } from "../gates/trust.ts";
import { formatPath, type LocatedIssue, quote, type SourceMap } from "./locate.ts";
import { combineSandbox, NO_SANDBOX_SETTINGS, parseSandboxBlock, type SandboxBlock } from "./sandbox.ts";
import type { RawUpstream } from "./schema.ts";
import { TOOL_NAME } from "./schema.ts";
import { DEFAULTS, type Upstream, type UpstreamKind } from "./types.ts";

/** `mcp_servers.<name>` normalized; a local server's sandbox combines `top` with its own block. */
export function normalizeUpstream(
  name: string,
  u: RawUpstream,
  top: SandboxBlock | undefined,
  src: SourceMap,
  errors: LocatedIssue[],
  warnings: LocatedIssue[],
): Upstream {
  const at = ["mcp_servers", name];
  const kind = upstreamKind(u, at, src, errors);
  const own = upstreamSandbox(u, kind, at, src, errors);
  const normalized = upstream(name, u, kind ?? "stdio", at, src, errors, warnings);
  if (kind === "stdio") normalized.sandbox = combineSandbox(top, own);
  return normalized;
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
      issuer: u.oauth?.issuer,
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
