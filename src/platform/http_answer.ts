/**
 * What an HTTP request came to, as hermit reads it: status, headers, and a body read whole or
 * chunk by chunk. The runtime's `Response` is one; `plain_fetch.ts` makes a lighter one (a native
 * `Response` per request, with its text() and stream machinery, costs a relay about 4 MiB
 * resident and a thread). `AnswerBody` is a queue of chunks: the connection pushes into it, the
 * reader takes them in order, an error or a cancel ends it.
 */
import { Buffer } from "node:buffer";

export interface AnswerReader {
  read(): Promise<{ done: boolean; value?: Uint8Array }>;
  releaseLock(): void;
}

export interface HttpAnswer {
  readonly status: number;
  readonly statusText: string;
  readonly ok: boolean;
  readonly headers: { get(name: string): string | null };
  /** Null when the answer has no body (204, 304, HEAD). */
  readonly body: { getReader(): AnswerReader; cancel(): Promise<void> } | null;
  text(): Promise<string>;
  json(): Promise<unknown>;
}

const decoder = new TextDecoder();

export class AnswerBody {
  #chunks: Uint8Array[] = [];
  #ended = false;
  #failed: { err: unknown } | undefined;
  #wake: (() => void) | undefined;
  readonly #onCancel: () => void;

  /** `onCancel`: the reader gave the body up before its end (the connection cannot be reused). */
  constructor(onCancel: () => void = () => {}) {
    this.#onCancel = onCancel;
  }

  push(bytes: Uint8Array): void {
    if (this.#ended || this.#failed) return;
    this.#chunks.push(bytes);
    this.#nudge();
  }

  end(): void {
    this.#ended = true;
    this.#nudge();
  }

  fail(err: unknown): void {
    if (this.#ended || this.#failed) return;
    this.#failed = { err };
    this.#nudge();
  }

  getReader(): AnswerReader {
    return { read: () => this.#read(), releaseLock: () => {} };
  }

  cancel(): Promise<void> {
    if (!this.#ended && !this.#failed) this.#onCancel();
    this.#chunks = [];
    this.#ended = true;
    this.#nudge();
    return Promise.resolve();
  }

  /** Everything, once it has all arrived. */
  async bytes(): Promise<Uint8Array> {
    if (this.#ended && this.#chunks.length <= 1) return this.#chunks[0] ?? new Uint8Array(0);
    const parts: Uint8Array[] = [];
    for (;;) {
      const { done, value } = await this.#read();
      if (done) break;
      parts.push(value!);
    }
    return Buffer.concat(parts);
  }

  async #read(): Promise<{ done: boolean; value?: Uint8Array }> {
    for (;;) {
      if (this.#chunks.length > 0) return { done: false, value: this.#chunks.shift()! };
      if (this.#failed) throw this.#failed.err;
      if (this.#ended) return { done: true };
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }

  #nudge(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}

/** An answer from a parsed status line and headers (names lower-cased), with its body. */
export class PlainAnswer implements HttpAnswer {
  readonly ok: boolean;
  readonly headers: { get(name: string): string | null };

  constructor(
    readonly status: number,
    readonly statusText: string,
    fields: readonly [string, string][],
    readonly body: AnswerBody | null,
  ) {
    this.ok = status >= 200 && status < 300;
    this.headers = {
      get: (name) => {
        const lower = name.toLowerCase();
        let value: string | null = null;
        for (const [k, v] of fields) if (k === lower) value = value === null ? v : `${value}, ${v}`;
        return value;
      },
    };
  }

  async text(): Promise<string> {
    return this.body ? decoder.decode(await this.body.bytes()) : "";
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }
}
