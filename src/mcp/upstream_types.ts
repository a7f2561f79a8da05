/**
 * What an upstream connection and its owner (the gateway) say to each other: what the owner
 * provides, the status an upstream reports, the typed error a call gets when no connection can be
 * had, and the wording of each case (one small function per message), a failed attempt's included.
 */
import type { Upstream } from "../manifest/types.ts";
import type { SchemaCache } from "./schema_cache.ts";
import type { BuiltTransport } from "./upstream_transport.ts";
import type { Clock } from "../platform/clock.ts";
import { cooldownSeconds } from "./upstream_lifecycle.ts";
import type { Admission, FailureKind, Life, UpstreamState } from "./upstream_state.ts";
import type { UpstreamTool } from "./upstream_tools.ts";

/** What an upstream needs from whoever owns it (the gateway). */
export interface UpstreamOwner {
  readonly clock: Clock;
  readonly schemaCache?: SchemaCache;
  openTransport(u: Upstream): BuiltTransport | Promise<BuiltTransport>;
  onToolsChanged(server: string): void;
  onPromptsChanged(server: string): void;
  onResourcesChanged(server: string): void;
  onStderrLine(server: string, line: string): void;
  /** Server-to-client requests (sampling, elicitation), answered by the gateway. */
  handleServerRequest(server: string, method: string, params: unknown, signal: AbortSignal): Promise<unknown>;
  /** Log messages and resource updates from the server. */
  onNotification(server: string, method: string, params: Record<string, unknown>): void;
  /** OAuth upstreams: a value that changes when the stored login does; undefined otherwise. */
  credentialsStamp?(u: Upstream): string | undefined;
  /** OAuth upstreams: what connecting waits for now (a refresh of the login), in words. */
  waitingFor?(u: Upstream): string | undefined;
}

/** Why a call found no connection; callers decide by `reason`, never by the message. */
export class UpstreamUnavailable extends Error {
  constructor(
    readonly server: string,
    readonly reason: "stopped" | "refused" | "cooldown" | "needs-login" | "failed",
    message: string,
    readonly retryInSeconds?: number,
  ) {
    super(message);
    this.name = "UpstreamUnavailable";
  }
}

// The wording of what an unavailable upstream says, one function per case.
export const stoppedMessage = (server: string, lastError?: string) =>
  `mcp_servers.${server} is stopped${lastError ? ` (${lastError})` : ""}`;
export const cooldownMessage = (server: string, lastError: string | undefined, seconds: number) =>
  `mcp_servers.${server} is unavailable (${lastError}); next attempt in ${seconds} s`;
export const failedToStartMessage = (server: string, why: string) =>
  `mcp_servers.${server} failed to start: ${why}`;
export const failureLogLine = (server: string, why: string, failures: number) =>
  `mcp_servers.${server}: ${why} (attempt ${failures}; next in ${cooldownSeconds(failures)} s)`;

/**
 * What a connect attempt's failure (already recorded: `failures` counts it) says: the log line and
 * its level, and the error the caller gets. A refused entry and a missing login are one line each.
 */
export function failureNotice(
  server: string,
  failure: { kind: FailureKind; why: string },
  failures: number,
): { level: "error" | "warn"; line: string; error: UpstreamUnavailable } {
  const { kind, why } = failure;
  if (kind === "refused") {
    return { level: "error", line: why, error: new UpstreamUnavailable(server, kind, why) };
  }
  if (kind === "needs-login") {
    return { level: "warn", line: why, error: new UpstreamUnavailable(server, kind, why) };
  }
  return {
    level: "warn",
    line: failureLogLine(server, why, failures),
    error: new UpstreamUnavailable(server, "failed", failedToStartMessage(server, why)),
  };
}

export interface UpstreamStatus {
  name: string;
  state: UpstreamState;
  transport: Upstream["kind"];
  tools: number;
  pid?: number;
  cached?: boolean;
  failures: number;
  retryInSeconds?: number;
  lastError?: string;
  /** Screening refused the entry right before its spawn: it never runs. */
  refused?: boolean;
}

/** What an upstream runs right now (`Gateway.liveUpstreams`): facts, never the connection. */
export interface LiveUpstream {
  name: string;
  connected: boolean;
  lastError?: string;
  tools: readonly UpstreamTool[];
  serverInfo?: { name: string; version: string };
  pid?: number;
}

/** The error a call gets when admission says no. */
export function unavailable(
  server: string,
  life: Life,
  a: Exclude<Admission, { go: true }>,
): UpstreamUnavailable {
  if (a.why === "stopped") {
    return life.refusal !== undefined
      ? new UpstreamUnavailable(server, "refused", life.refusal)
      : new UpstreamUnavailable(server, "stopped", stoppedMessage(server, life.lastError));
  }
  if (a.why === "needs-login") return new UpstreamUnavailable(server, "needs-login", life.lastError ?? "");
  return new UpstreamUnavailable(
    server,
    "cooldown",
    cooldownMessage(server, life.lastError, a.retryInSeconds),
    a.retryInSeconds,
  );
}
