/**
 * One connect attempt to an upstream, as I/O: open a link through the owner (interpolated,
 * screened, spawned or dialed), connect within `connect_timeout_seconds`, read what the server
 * said in `initialize` and list its tools, asking after each wait whether the attempt is still
 * wanted. The connection takes what was opened inside the attempt, so a failure there is the
 * attempt's too. On a failure the attempt closes what it opened and answers the failure's kind and
 * one line — with the sandbox's reading of a start failure, and redacted here, where it is made:
 * that line goes to the log, `lastError`, /health and every message after.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { redactCredentials } from "../gates/redact.ts";
import type { Upstream } from "../manifest/types.ts";
import type { GroupStdioTransport } from "./stdio_transport.ts";
import { classifyFailure, type Link, type openLink } from "./upstream_client.ts";
import type { LifeDriver } from "./upstream_driver.ts";
import type { Listed } from "./upstream_listing.ts";
import type { FailureKind } from "./upstream_state.ts";
import type { BuiltTransport } from "./upstream_transport.ts";
import { UpstreamUnavailable } from "./upstream_types.ts";

/** What the attempt needs from its connection. */
export interface AttemptSite {
  readonly config: Upstream;
  /** A new link, not connected yet (`openLink` through the connection's owner). */
  open(): ReturnType<typeof openLink>;
  /** Where the link being opened is known, so that a stop closes it. */
  readonly links: Pick<LifeDriver, "opening" | "abandoned">;
  /** Every page of the tool list (nothing changes until the connection takes it). */
  list(client: Client, capabilities: ServerCapabilities | undefined): Promise<Listed>;
  /** Throws `UpstreamUnavailable` when the attempt is no longer wanted (stopped or superseded). */
  stillWanted(): void;
}

/** What a successful attempt opened, for the connection to take. */
export interface Opened {
  link: Link;
  /** The command line or URL, with no secrets. */
  describe: string;
  capabilities: ServerCapabilities | undefined;
  instructions: string | undefined;
  listed: Listed;
}

/** What the connection made of the opened link, or why the attempt failed (redacted). */
export type AttemptOutcome<T> = { ok: true; taken: T } | { ok: false; kind: FailureKind; why: string };

/** Run one attempt; `take` runs inside it. Rethrows `UpstreamUnavailable` (stopped meanwhile). */
export async function connectAttempt<T>(
  site: AttemptSite,
  take: (opened: Opened) => T,
): Promise<AttemptOutcome<T>> {
  let link: Link | undefined;
  let explain: BuiltTransport["explain"];
  try {
    const opened = await site.open();
    link = opened.link;
    explain = opened.explain;
    const client = link.client;
    site.links.opening(link);
    await client.connect(link.transport, { timeout: site.config.connectTimeoutSeconds * 1000 });
    link.responsesAfterNotifications();
    site.stillWanted();
    const capabilities = client.getServerCapabilities();
    const instructions = client.getInstructions();
    const listed = await site.list(client, capabilities);
    site.stillWanted();
    return { ok: true, taken: take({ link, describe: opened.describe, capabilities, instructions, listed }) };
  } catch (err) {
    site.links.abandoned(link);
    const tail = (link?.transport as GroupStdioTransport | undefined)?.stderrTail?.slice(-3) ?? [];
    await link?.close();
    if (err instanceof UpstreamUnavailable) throw err; // stopped meanwhile
    const failure = classifyFailure(err, { link, stderrTail: tail, oauth: site.config.auth === "oauth" });
    const kind = failure.kind;
    // `explain`: the sandbox's reading of a start failure (it names the key that would open it)
    const why = redactCredentials(kind === "error" && explain ? explain(failure.why, tail) : failure.why);
    return { ok: false, kind, why };
  }
}
