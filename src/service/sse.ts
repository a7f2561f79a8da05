/**
 * One Server-Sent Events answer: the `Response` to hand out and a writer for it. Events carry an
 * id (for `Last-Event-ID`), a priming event (id, empty data, a `retry` hint) tells a client where
 * to resume from, and a comment every 15 s keeps the connection from being taken for idle by the
 * service itself or a proxy. `onclose` runs once, whether the service or the client ended it.
 */

const KEEPALIVE_MS = 15_000;
const encoder = new TextEncoder();

export class SseStream {
  readonly response: Response;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #closed = false;
  #keepalive: ReturnType<typeof setInterval>;
  /** Whether the client has an event id to resume from. */
  hasId = false;
  onclose?: () => void;

  constructor(headers: Record<string, string>) {
    const body = new ReadableStream<Uint8Array>({
      start: (c) => void (this.#controller = c),
      cancel: () => this.#ended(),
    });
    this.response = new Response(body, {
      status: 200,
      headers: {
        "content-type": "text/event-stream",
        "cache-control": "no-cache, no-transform",
        "x-accel-buffering": "no",
        ...headers,
      },
    });
    this.#keepalive = setInterval(() => this.#write(": keepalive\n\n"), KEEPALIVE_MS);
    (this.#keepalive as { unref?: () => void }).unref?.();
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** A message event; false when the stream is gone. */
  send(id: string | undefined, data: string): boolean {
    if (id !== undefined) this.hasId = true;
    return this.#write(`event: message\n${id !== undefined ? `id: ${id}\n` : ""}data: ${data}\n\n`);
  }

  /** The priming event: an id to resume from, and how long to wait before reconnecting. */
  prime(id: string, retryMs: number): void {
    this.hasId = true;
    this.#write(`id: ${id}\nretry: ${retryMs}\ndata: \n\n`);
  }

  close(): void {
    if (this.#closed) return;
    try {
      this.#controller.close();
    } catch { /* already closed */ }
    this.#ended();
  }

  #write(text: string): boolean {
    if (this.#closed) return false;
    try {
      this.#controller.enqueue(encoder.encode(text));
      return true;
    } catch {
      this.#ended();
      return false;
    }
  }

  #ended(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#keepalive);
    this.onclose?.();
  }
}
