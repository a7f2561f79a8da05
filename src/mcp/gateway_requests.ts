/**
 * Requests that travel towards the host: approvals for untrusted tools (gate 5) and the sampling
 * and elicitation requests an upstream sends while one of its tools runs (gate 6). A request goes
 * to the host session whose call is in flight on that upstream; when calls of several sessions
 * are in flight and the request cannot be attributed, it is refused rather than shown to the
 * wrong user.
 */
import {
  type ClientCapabilities,
  type CreateMessageRequest,
  type CreateMessageResult,
  type ElicitRequest,
  type ElicitResult,
  ErrorCode,
  type LoggingLevel,
  McpError,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import { messageOf } from "../errors.ts";
import { attributedForm, checkElicitation, checkSampling, RateWindow } from "../gates/sampling.ts";
import { sanitizeValue } from "../gates/sanitize.ts";
import { type ApprovalOutcome, approvalRequest, readApproval, refusalText } from "../gates/trust.ts";
import { log } from "../log.ts";
import type { Upstream } from "../manifest/types.ts";

/** Routing for a message towards a host: on the stream of the host request it belongs to. */
export interface Related {
  timeoutMs: number;
  signal?: AbortSignal;
  relatedRequestId?: RequestId;
}

/** A host session as the gateway sees it. */
export interface SessionPeer {
  id: string;
  clientCapabilities(): ClientCapabilities | undefined;
  /** The log level the host asked for (`logging/setLevel`), if it did. */
  logLevel?: LoggingLevel;
  elicit(params: ElicitRequest["params"], opts: Related): Promise<ElicitResult>;
  createMessage(params: CreateMessageRequest["params"], opts: Related): Promise<CreateMessageResult>;
  notify(method: string, params: Record<string, unknown>, relatedRequestId?: RequestId): Promise<void>;
}

export interface CallContext {
  session?: SessionPeer;
  /** The host's request id, so what the call causes travels on that request's stream. */
  requestId?: RequestId;
  signal?: AbortSignal;
  onprogress?: (p: { progress: number; total?: number; message?: string }) => void;
  /** Ask for approval some other way (a TTY prompt for `hermit call`). */
  approve?: (question: ElicitRequest["params"]) => Promise<ElicitResult>;
}

/** Can this host answer a form-mode elicitation? (`elicitation: {}` is form mode, from older hosts.) */
function canAskForms(session: SessionPeer | undefined): boolean {
  const e = session?.clientCapabilities()?.elicitation as Record<string, unknown> | undefined;
  return e !== undefined && (Object.keys(e).length === 0 || e.form !== undefined);
}

/** Ask the user to approve a call to a tool of an untrusted server; a refusal text, or undefined when approved. */
export async function askApproval(
  u: Upstream,
  tool: string,
  args: Record<string, unknown>,
  ctx: CallContext,
): Promise<string | undefined> {
  const subject = { server: u.name, tool, args };
  const question = approvalRequest(subject);
  let outcome: ApprovalOutcome;
  let detail: string | undefined;
  try {
    if (!question) outcome = "unshowable"; // what cannot be shown is not asked about
    else if (ctx.approve) outcome = readApproval(await ctx.approve(question));
    else if (canAskForms(ctx.session)) {
      outcome = readApproval(
        await ctx.session!.elicit(question, {
          timeoutMs: u.elicitation.timeoutSeconds * 1000,
          signal: ctx.signal,
          relatedRequestId: ctx.requestId,
        }),
      );
    } else outcome = "unavailable";
  } catch (err) {
    const timedOut = (err as { code?: number }).code === ErrorCode.RequestTimeout;
    outcome = timedOut ? "cancelled" : "failed";
    detail = messageOf(err);
  }
  if (outcome === "approved") {
    log.info(`approved: ${tool} on untrusted mcp_servers.${u.name}`);
    return undefined;
  }
  log.warn(`refused: ${tool} on untrusted mcp_servers.${u.name}: approval ${outcome}`);
  return refusalText(subject, outcome, detail);
}

export class ServerRequests {
  /** The manifest entry of a server the gateway runs (undefined for any other name). */
  readonly #configOf: (server: string) => Upstream | undefined;
  readonly #inFlight = new Map<string, Map<CallContext, number>>();
  readonly #windows = new Map<string, RateWindow>();
  readonly #elicitWindows = new Map<string, RateWindow>();

  constructor(configOf: (server: string) => Upstream | undefined) {
    this.#configOf = configOf;
  }

  /** Mark a call on `server` as in flight for `ctx`'s session; returns the release function. */
  enter(server: string, ctx: CallContext): () => void {
    let calls = this.#inFlight.get(server);
    if (!calls) this.#inFlight.set(server, calls = new Map());
    calls.set(ctx, (calls.get(ctx) ?? 0) + 1);
    return () => {
      const n = (calls!.get(ctx) ?? 1) - 1;
      if (n <= 0) calls!.delete(ctx);
      else calls!.set(ctx, n);
    };
  }

  /** The one session with calls in flight on `server` (and its latest call), if there is exactly one. */
  #sessionFor(server: string): { session?: SessionPeer; call?: CallContext; ambiguous: boolean } {
    const calls = [...(this.#inFlight.get(server)?.keys() ?? [])].filter((c) => c.session);
    const sessions = new Set(calls.map((c) => c.session));
    if (sessions.size === 1) {
      return { session: calls[0].session, call: calls[calls.length - 1], ambiguous: false };
    }
    return { ambiguous: sessions.size > 1 };
  }

  /**
   * A notification from an upstream (a log message): to the session whose call is running on it,
   * on that call's stream; when none is, to every session that asked for logs.
   */
  route(
    server: string,
    method: string,
    params: Record<string, unknown>,
    sessions: Iterable<SessionPeer>,
  ): void {
    const clean = sanitizeValue(params);
    const { session, call } = this.#sessionFor(server);
    const targets = session ? [session] : [...sessions].filter((s) => s.logLevel !== undefined);
    for (const s of targets) {
      void s.notify(method, clean, session ? call?.requestId : undefined).catch(() => {});
    }
  }

  /**
   * A request from an upstream towards the host (sampling, elicitation): sanitized (gate 4: hidden
   * characters, reserved and hermit's own `_meta` keys) before any check, then checked (gate 6) and
   * forwarded to the session whose call caused it; the host's sampling answer is sanitized too.
   */
  async handle(server: string, method: string, raw: unknown, signal: AbortSignal): Promise<unknown> {
    const config = this.#configOf(server);
    if (!config) throw new McpError(ErrorCode.InvalidRequest, "unknown server");
    const params = sanitizeValue(raw);
    const { session, call, ambiguous } = this.#sessionFor(server);
    const relatedRequestId = call?.requestId;
    const why = ambiguous
      ? "calls from several host sessions are in flight, so the request cannot be attributed"
      : "no host session is waiting on this server";
    if (method === "elicitation/create") {
      const p = params as ElicitRequest["params"];
      let window = this.#elicitWindows.get(server);
      if (!window) this.#elicitWindows.set(server, window = new RateWindow(config.sampling.maxRpm));
      // the user is told who asks: a server's question never reads as hermit's own (gate 5's)
      const form = attributedForm(server, p);
      const checked = checkElicitation(p, config.elicitation.enabled, window);
      const verdict = checked.ok ? form : checked;
      if (!verdict.ok || !canAskForms(session)) {
        log.info(
          `mcp_servers.${server}: elicitation declined: ${
            verdict.ok ? (session ? "the host cannot elicit" : why) : verdict.reason
          }`,
        );
        return { action: "decline" } satisfies ElicitResult;
      }
      try {
        return await session!.elicit(verdict.params, {
          timeoutMs: config.elicitation.timeoutSeconds * 1000,
          signal,
          relatedRequestId,
        });
      } catch (err) {
        const timedOut = (err as { code?: number }).code === ErrorCode.RequestTimeout;
        return { action: timedOut ? "cancel" : "decline" } satisfies ElicitResult;
      }
    }
    if (method === "sampling/createMessage") {
      if (!session) throw new McpError(ErrorCode.InvalidRequest, `sampling refused: ${why}`);
      if (!session.clientCapabilities()?.sampling) {
        throw new McpError(ErrorCode.InvalidRequest, "sampling refused: the host does not support sampling");
      }
      let window = this.#windows.get(server);
      if (!window) this.#windows.set(server, window = new RateWindow(config.sampling.maxRpm));
      const verdict = checkSampling(params as CreateMessageRequest["params"], config.sampling, window);
      if (!verdict.ok) throw new McpError(ErrorCode.InvalidRequest, `sampling refused: ${verdict.reason}`);
      const result = await session.createMessage(verdict.params, {
        timeoutMs: config.sampling.timeoutSeconds * 1000,
        signal,
        relatedRequestId,
      });
      return sanitizeValue(result);
    }
    throw new McpError(ErrorCode.MethodNotFound, `${method} is not forwarded`);
  }
}
