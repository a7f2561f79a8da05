/**
 * One session's bounded event store, for resuming SSE streams with `Last-Event-ID` (SEP-1699).
 * Every event written to an SSE stream gets the next id of the session and is kept here (priming
 * events with empty data too: a client may resume from one); the oldest events go once the store
 * holds `maxEvents` events or `maxBytes` of data. Only streamed answers pass through it: a request
 * answered with plain JSON is never stored.
 */

export interface StoredEvent {
  id: number;
  stream: string;
  /** The serialized JSON-RPC message; "" for a priming event. */
  data: string;
}

export class EventStore {
  readonly #events: StoredEvent[] = [];
  #next = 1;
  #bytes = 0;

  constructor(readonly maxEvents = 512, readonly maxBytes = 1024 * 1024) {}

  /** Store an event of `stream`; its id, as the SSE `id:` field carries it. */
  append(stream: string, data: string): string {
    const event = { id: this.#next++, stream, data };
    this.#events.push(event);
    this.#bytes += data.length;
    while (this.#events.length > this.maxEvents || (this.#bytes > this.maxBytes && this.#events.length > 1)) {
      this.#bytes -= this.#events.shift()!.data.length;
    }
    return String(event.id);
  }

  /**
   * The stream `lastEventId` belongs to and its events after it; undefined when that event is not
   * (or no longer) stored, so the stream cannot be resumed.
   */
  after(lastEventId: string): { stream: string; events: StoredEvent[] } | undefined {
    if (!/^[1-9]\d{0,15}$/.test(lastEventId) || this.#events.length === 0) return undefined;
    const at = Number(lastEventId) - this.#events[0].id;
    const last = this.#events[at];
    if (!last) return undefined;
    return {
      stream: last.stream,
      events: this.#events.slice(at + 1).filter((e) => e.stream === last.stream),
    };
  }

  get size(): { events: number; bytes: number } {
    return { events: this.#events.length, bytes: this.#bytes };
  }
}
