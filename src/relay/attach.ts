/**
 * Opening a relay's session on a service: a link, and for a host that already has its
 * `initialize` answer (from the warm answers, or from a service that went away) the host's
 * `initialize` replayed under an id of the relay's, whose answer stays here — also when it comes
 * too late. A link that fails half way is closed (its session DELETEd), so nothing is left behind.
 */
import type { JSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";
import type { Clock } from "../platform/clock.ts";
import type { Refusal } from "../service/access.ts";
import type { Message } from "./jsonrpc.ts";
import { type LinkHandlers, type ServiceAddress, ServiceLink } from "./link.ts";

/** What the relay needs of a session on a service (a `ServiceLink`; tests pass their own). */
export type Link = Pick<
  ServiceLink,
  "post" | "openEventStream" | "close" | "setProtocolVersion" | "sessionAlive"
>;
export type Connect = (addr: ServiceAddress, handlers: LinkHandlers, clock: Clock) => Link;
export const connectHttp: Connect = (addr, handlers, clock) => new ServiceLink(addr, handlers, clock);

/** A service refused a connection attempt (401/403). */
export class ServiceRefused extends Error {
  constructor(readonly refusal: Refusal) {
    super(`refused (${refusal.status}): ${refusal.detail}`);
    this.name = "ServiceRefused";
  }
}

/** How long the service may take to answer a replayed `initialize`. */
const REPLAY_MS = 30_000;
let replays = 0;

/**
 * Connect to `addr`; with `replay` (the host's initialize), initialize the new session too.
 * Throws (a `ServiceRefused` for a 401/403) when that fails, the link closed.
 */
export async function openLink(
  opts: {
    connect: Connect;
    addr: ServiceAddress;
    clock: Clock;
    handlers: LinkHandlers;
    replay?: JSONRPCRequest;
  },
): Promise<Link> {
  const { clock, replay } = opts;
  const id = `hermit-relay-init-${++replays}`;
  let answered: ((m: Message) => void) | undefined;
  const link = opts.connect(opts.addr, {
    ...opts.handlers,
    // the replay's answer is the relay's own, even when it comes too late
    onMessage: (m) => m.kind === "response" && m.id === id ? answered?.(m) : opts.handlers.onMessage(m),
  }, clock);
  if (!replay) return link;
  const answer = new Promise<Message>((resolve) => (answered = resolve));
  let timer: unknown;
  const late = new Promise<"late">((resolve) => (timer = clock.setTimeout(() => resolve("late"), REPLAY_MS)));
  try {
    const r = await Promise.race([link.post(JSON.stringify({ ...replay, id }), id), late]);
    if (r === "late") throw new Error(`no answer to the replayed initialize within ${REPLAY_MS / 1000} s`);
    if (r.kind === "refused") throw new ServiceRefused(r.refusal);
    if (r.kind !== "answered") {
      throw new Error(
        `the replayed initialize ${r.kind === "failed" ? `failed: ${r.why}` : `got ${r.kind}`}`,
      );
    }
    const m = await answer;
    const version = m.kind === "response" ? m.result?.protocolVersion : undefined;
    if (typeof version !== "string") throw new Error("the service refused the replayed initialize");
    link.setProtocolVersion(version);
    return link;
  } catch (err) {
    await link.close();
    throw err;
  } finally {
    clock.clearTimeout(timer);
    answered = undefined;
  }
}
