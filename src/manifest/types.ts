/**
 * The normalized manifest every other module works with: defaults applied, Hermes-compatible
 * numbers filled in, trust folded to `full | untrusted`. Raw YAML shapes stay in `schema.ts`.
 */
import type { LocatedIssue } from "./locate.ts";

export type Trust = "full" | "untrusted";
export type UpstreamKind = "stdio" | "http" | "sse";

/** Hermes's numeric defaults (reference/hermes.md section 2), matched on purpose. */
export const DEFAULTS = {
  toolTimeoutSeconds: 60,
  callTimeoutSeconds: 300,
  connectTimeoutSeconds: 60,
  keepaliveSeconds: 180,
  keepaliveFloorSeconds: 5,
  idleShutdownSeconds: 300,
  /** Standalone service: how long a SIGTERM waits for calls in flight (below Kubernetes' 30 s grace). */
  drainSeconds: 20,
  maxSessions: 256,
  /** Requests open at once (event streams included), well under a 1024-descriptor limit. */
  maxConnections: 512,
  maxToolProcesses: 32,
  sampling: { enabled: true, maxRpm: 10, timeoutSeconds: 30, maxTokensCap: 4096, maxToolRounds: 5 },
  elicitation: { enabled: true, timeoutSeconds: 300 },
} as const;

/** A `host:port` the egress proxy lets a confined process reach. */
export interface Destination {
  /** Lower case; an IPv6 address without brackets; `*.example.com` matches its subdomains. */
  host: string;
  port: number;
}

export type SandboxNetwork = "all" | "none" | Destination[];

/**
 * An entry's `sandbox:` policy as written (paths not yet interpolated), already combined with the
 * adapter's top-level block: the lists add up, `network` and `require` replace, `off` on either
 * wins unless the entry has a block of its own. See `src/sandbox/policy.ts` for the defaults.
 */
export interface SandboxSettings {
  /** `sandbox: off`: run unconfined (logged at every start). */
  off: boolean;
  read: string[];
  denyRead: string[];
  write: string[];
  /** Undefined: the default for the entry (all for trust full and command tools, none for untrusted). */
  network?: SandboxNetwork;
  require: boolean;
}

export interface CommandTool {
  name: string;
  description: string;
  title?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  run: string[];
  readOnly: boolean;
  destructive?: boolean;
  idempotent?: boolean;
  openWorld?: boolean;
  timeoutSeconds: number;
  env: Record<string, string>;
  /** Relative to the adapter directory. */
  cwd?: string;
  sandbox: SandboxSettings;
}

export interface SamplingPolicy {
  enabled: boolean;
  maxRpm: number;
  timeoutSeconds: number;
  maxTokensCap: number;
  maxToolRounds: number;
  model?: string;
  allowedModels: string[];
}

export interface Upstream {
  name: string;
  kind: UpstreamKind;
  command?: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  url?: string;
  headers: Record<string, string>;
  enabled: boolean;
  callTimeoutSeconds: number;
  connectTimeoutSeconds: number;
  keepaliveSeconds: number;
  /** 0 = never recycle. */
  idleTimeoutSeconds: number;
  maxLifetimeSeconds: number;
  lazy: boolean;
  include?: string[];
  exclude: string[];
  resources: boolean;
  prompts: boolean;
  rename: Record<string, string>;
  prefix: string;
  trust: Trust;
  /**
   * fnmatch globs on the server's own tool names that the manifest declares read-only: on an
   * untrusted server the only way a tool counts as read-only (gate 5).
   */
  readOnlyTools: string[];
  /** The value as written, when it was not `full` or `untrusted`. */
  trustWritten?: string;
  auth?: "oauth";
  oauth: {
    clientId?: string;
    clientSecret?: string;
    scope?: string;
    redirectPort?: number;
    clientName?: string;
    /** The authorization server login and refresh must find (else the first login's is kept). */
    issuer?: string;
  };
  sampling: SamplingPolicy;
  elicitation: { enabled: boolean; timeoutSeconds: number };
  /** Local (command) servers only; remote ones run elsewhere. */
  sandbox: SandboxSettings;
}

export interface ServeConfig {
  transport: "stdio" | "http";
  command: string;
  health: "tools/list";
  lifecycle: "session" | "standalone";
  hostLaunch: boolean;
  instructions?: string;
  idleShutdownSeconds: number;
  port?: number;
  /** SIGTERM: finish the calls in flight for at most this long, then stop. */
  drainSeconds: number;
  /** An SSE answer stays open at most this long; the client resumes it (SEP-1699). 0: no limit. */
  streamSeconds: number;
  maxSessions: number;
  maxConnections: number;
  /** Command-tool processes running at once, in either lifecycle. */
  maxToolProcesses: number;
}

export interface Manifest {
  /** Absolute path of hermit.yaml. */
  file: string;
  /** Absolute path of the adapter directory. */
  dir: string;
  name: string;
  version?: string;
  description?: string;
  exports: { tools: string[]; context?: string; skills?: string; roles?: string };
  tools: Record<string, CommandTool>;
  upstreams: Record<string, Upstream>;
  serve: ServeConfig;
  /** The top-level `sandbox:` block: the adapter's default for every entry. */
  sandbox: SandboxSettings;
  /** Things worth saying that do not make the manifest invalid. */
  warnings: LocatedIssue[];
}
