/**
 * The service's requests to the host (elicitation and approvals, sampling, roots, ping), under ids
 * the relay gives them. Each session numbers its own requests from 0, so after a reconnect the host
 * may still hold an old session's request with the same id as one of the new session's; passed on
 * as they were, the host's late answer to the old one (an approval the user gave for one call)
 * would be taken as the answer to the new one. Here every request reaches the host under an id no
 * other has had, the host's answer goes back only to the session that asked, under its own id,
 * and an answer for a session given up (or for an id nobody asked) is dropped. The service's
 * cancellation of a request it sent reaches the host under the id the host knows.
 */
import type { RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { Message } from "./jsonrpc.ts";

type Request = Extract<Message, { kind: "request" }>;
type Response = Extract<Message, { kind: "response" }>;
type Notification = Extract<Message, { kind: "notification" }>;

interface Asked<L> {
  session: L;
  id: RequestId;
}

export class AskedOfHost<L> {
  #next = 0;
  /** By the id the host knows. */
  readonly #asked = new Map<number, Asked<L>>();

  /** The service's request `m`, from `session`, as the host gets it. */
  ask(m: Request, session: L): string {
    const id = ++this.#next;
    this.#asked.set(id, { session, id: m.id });
    return JSON.stringify({ ...m.req, id });
  }

  /**
   * The host's answer: the session that asked and the answer as that session numbered it; undefined
   * when nobody asked under that id (or it was answered already).
   */
  answer(m: Response): { session: L; text: string } | undefined {
    const asked = typeof m.id === "number" ? this.#asked.get(m.id) : undefined;
    if (!asked) return undefined;
    this.#asked.delete(m.id as number);
    return { session: asked.session, text: JSON.stringify({ ...JSON.parse(m.text), id: asked.id }) };
  }

  /**
   * A notification from `session`, as the host gets it: `notifications/cancelled` for one of its
   * requests names the id the host knows (and that request is forgotten); undefined when it names
   * a request the host was never sent.
   */
  notification(m: Notification, session: L): string | undefined {
    if (m.method !== "notifications/cancelled") return m.text;
    const v = JSON.parse(m.text) as { params?: { requestId?: unknown } };
    const theirs = v.params?.requestId;
    for (const [id, a] of this.#asked) {
      if (a.session !== session || a.id !== theirs) continue;
      this.#asked.delete(id);
      return JSON.stringify({ ...v, params: { ...v.params, requestId: id } });
    }
    return undefined;
  }

  /** A new session: the requests of every other one will not be answered to anyone. */
  forgetAllBut(session: L | undefined): void {
    for (const [id, a] of this.#asked) if (a.session !== session) this.#asked.delete(id);
  }

  /** Requests the host was sent and has not answered. */
  get size(): number {
    return this.#asked.size;
  }
}
