/**
 * Calls on an upstream's live link: each waits for a connection and counts as in flight while it
 * runs (recycling and the keepalive wait while any is; each one's end is activity for the idle
 * timer). A tool call is at most once: when the link is lost under it, a read-only call is retried
 * once and any other is answered "outcome uncertain" (`OutcomeUncertain`); an error the server
 * answered is passed on as it is. Each attempt is judged again (`admit`) once connected.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { log } from "../log.ts";
import type { Upstream } from "../manifest/types.ts";
import type { Link } from "./upstream_client.ts";

/** How one tool call runs: cancelled by `signal`, progress to `onprogress`, retried only if `readOnly`. */
export interface CallOptions {
  signal?: AbortSignal;
  onprogress?: (p: { progress: number; total?: number; message?: string }) => void;
  readOnly: boolean;
  /**
   * Judge the call again once connected, right before it is sent (each attempt): connecting (a
   * lazy start, a reconnect) lists the server's tools anew. Throws `CallRefused` to stop it.
   */
  admit?: () => void;
}

/** A call the gates turned away once connected: it was never sent. */
export class CallRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CallRefused";
  }
}

export class OutcomeUncertain extends Error {
  constructor(readonly server: string, readonly tool: string) {
    super(
      `outcome uncertain: mcp_servers.${server} went away while running ${tool}; it may or may not have taken effect. ` +
        "Check before retrying.",
    );
    this.name = "OutcomeUncertain";
  }
}

/** What the calls need from their connection. */
export interface CallHooks {
  /** Connect, if not connected (rejects when no connection can be had). */
  connect(): Promise<unknown>;
  /** The live link (once `connect` resolved). */
  live(): Link | undefined;
  /** A link was lost under a call: the next call must not reuse it. */
  lost(link: Link): void;
  /** A call ended (activity, for the idle timer). */
  ended(): void;
}

export class UpstreamCalls {
  readonly #config: Upstream;
  readonly #hooks: CallHooks;
  #inFlight = 0;

  constructor(config: Upstream, hooks: CallHooks) {
    this.#config = config;
    this.#hooks = hooks;
  }

  /** True while any call runs. */
  get busy(): boolean {
    return this.#inFlight > 0;
  }

  /** Run `fn` on the live link, counting it as in flight. */
  async withLink<T>(fn: (link: Link) => Promise<T>): Promise<T> {
    await this.#hooks.connect();
    const link = this.#hooks.live()!;
    this.#inFlight++;
    try {
      return await fn(link);
    } finally {
      this.#inFlight--;
      this.#hooks.ended();
    }
  }

  /**
   * Call a tool by its raw name. When the connection is lost under the call, a read-only call is
   * retried once; any other is answered "outcome uncertain" (at most once). An error the server
   * answered is passed on as it is.
   */
  async callTool(
    raw: string,
    args: Record<string, unknown>,
    opts: CallOptions,
  ): Promise<CallToolResult> {
    let used: Link | undefined;
    const call = async (link: Link) => {
      opts.admit?.();
      used = link;
      return await link.callTool({ name: raw, arguments: args }, {
        signal: opts.signal,
        timeout: this.#config.callTimeoutSeconds * 1000,
        resetTimeoutOnProgress: true,
        onprogress: opts.onprogress,
      }) as CallToolResult;
    };
    try {
      return await this.withLink(call);
    } catch (err) {
      if (!used?.lost || opts.signal?.aborted) throw err;
      // do not wait for the transport to notice: the next attempt must not reuse this link
      this.#hooks.lost(used);
      if (!opts.readOnly) throw new OutcomeUncertain(this.#config.name, raw);
      log.info(`mcp_servers.${this.#config.name}: connection lost during read-only ${raw}; retrying once`);
      return await this.withLink(call);
    }
  }
}
