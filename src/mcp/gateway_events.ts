/**
 * What travels from the upstreams towards the hosts besides call results, and to whom: the
 * events each upstream connection sends its owner — a changed tool, prompt or resource list (to
 * the gateway's change listeners: the session servers, which tell their hosts), a stderr line (to
 * the log), a request of its own (sampling, elicitation: to `ServerRequests`, which gates it), a
 * log message (to the session whose call runs there, else to those that asked for logs) or a
 * resource update (to the sessions subscribed) — and the host sessions attached right now.
 */
import { log } from "../log.ts";
import type { ContentRouter } from "./gateway_content.ts";
import type { ServerRequests, SessionPeer } from "./gateway_requests.ts";
import type { UpstreamOwner } from "./upstream_types.ts";

export type ChangeKind = "tools" | "prompts" | "resources";

/** The events an upstream sends its owner (what the owner provides is the gateway's to give). */
export type UpstreamEvents = Pick<
  UpstreamOwner,
  | "onToolsChanged"
  | "onPromptsChanged"
  | "onResourcesChanged"
  | "onStderrLine"
  | "handleServerRequest"
  | "onNotification"
>;

export class GatewayEvents {
  readonly #requests: ServerRequests;
  readonly #content: ContentRouter;
  /** How upstream stderr lines are logged. */
  readonly #stderrLevel: "info" | "debug";
  readonly #listeners = new Set<(kind: ChangeKind) => void>();
  /** The host sessions attached right now (for log messages and resource updates). */
  readonly #sessions = new Set<SessionPeer>();

  constructor(requests: ServerRequests, content: ContentRouter, stderrLevel: "info" | "debug") {
    this.#requests = requests;
    this.#content = content;
    this.#stderrLevel = stderrLevel;
  }

  /** A host session starts using the gateway; the returned function detaches it. */
  attach(peer: SessionPeer): () => void {
    this.#sessions.add(peer);
    return () => {
      this.#sessions.delete(peer);
      this.#content.forget(peer);
    };
  }

  onChange(listener: (kind: ChangeKind) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  emit(kind: ChangeKind): void {
    for (const l of this.#listeners) l(kind);
  }

  /** Where each upstream connection's events go. */
  fromUpstreams(): UpstreamEvents {
    return {
      onToolsChanged: () => this.emit("tools"),
      onPromptsChanged: () => this.emit("prompts"),
      onResourcesChanged: () => this.emit("resources"),
      onStderrLine: (server, line) => {
        const text = `[${server}] ${line}`;
        if (this.#stderrLevel === "info") log.info(text);
        else log.debug(text);
      },
      handleServerRequest: (server, method, params, signal) =>
        this.#requests.handle(server, method, params, signal),
      onNotification: (server, method, params) => {
        if (method === "notifications/resources/updated") this.#content.updated(params);
        else this.#requests.route(server, method, params, this.#sessions);
      },
    };
  }
}
