/**
 * Server-sent events, decoded as the HTML standard says (lines end in CRLF, LF or CR; `data`
 * lines join with LF; `id`, `event` and `retry` fields; comments ignored; an event is dispatched at
 * a blank line). Pure and incremental: text in, events out, so a chunk may end anywhere. An event
 * without data still carries its id (a "priming" event a server sends so the stream can resume).
 */

export interface SseEvent {
  /** `message` when the server named none. */
  event: string;
  data: string;
  /** The last event id seen on the stream so far (the standard's "last event ID buffer"). */
  id?: string;
  /** A reconnection time the server asked for, in ms. */
  retry?: number;
  /** Whether this event had a data field at all (priming events have none). */
  hasData: boolean;
}

export class SseDecoder {
  #buf = "";
  /** A CR ended the last chunk: an LF at the start of the next one belongs to it. */
  #cr = false;
  #data: string[] = [];
  #event = "";
  #id: string | undefined;
  #retry: number | undefined;
  #fields = false;

  /** The id carried by the events dispatched so far (what a `Last-Event-ID` header sends). */
  get lastEventId(): string | undefined {
    return this.#id;
  }

  push(text: string): SseEvent[] {
    if (this.#cr && text.startsWith("\n")) text = text.slice(1);
    this.#cr = false;
    this.#buf += text;
    const out: SseEvent[] = [];
    let start = 0;
    for (;;) {
      const cr = this.#buf.indexOf("\r", start);
      const lf = this.#buf.indexOf("\n", start);
      const end = cr < 0 ? lf : lf < 0 ? cr : Math.min(cr, lf);
      if (end < 0) break;
      this.#line(this.#buf.slice(start, end), out);
      if (this.#buf[end] === "\r" && this.#buf[end + 1] === "\n") start = end + 2;
      else {
        start = end + 1;
        // a CR that ends the chunk may be the first half of a CRLF
        if (this.#buf[end] === "\r" && start === this.#buf.length) this.#cr = true;
      }
    }
    this.#buf = this.#buf.slice(start);
    return out;
  }

  #line(line: string, out: SseEvent[]): void {
    if (line === "") return this.#dispatch(out);
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") {
      this.#data.push(value);
      this.#fields = true;
    } else if (field === "event") {
      this.#event = value;
      this.#fields = true;
    } else if (field === "id") {
      if (!value.includes("\0")) this.#id = value;
      this.#fields = true;
    } else if (field === "retry") {
      if (value !== "" && [...value].every((c) => c >= "0" && c <= "9")) this.#retry = Number(value);
      this.#fields = true;
    }
  }

  #dispatch(out: SseEvent[]): void {
    if (this.#fields) {
      out.push({
        event: this.#event || "message",
        data: this.#data.join("\n"),
        id: this.#id,
        retry: this.#retry,
        hasData: this.#data.length > 0,
      });
    }
    this.#data = [];
    this.#event = "";
    this.#retry = undefined;
    this.#fields = false;
  }
}
