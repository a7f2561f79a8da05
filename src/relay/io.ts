/**
 * The relay's stdio, as cheap as the runtime allows: under Bun (and in the compiled binary) Bun's
 * own stdin stream and file sinks, which cost a fraction of Node's stream machinery (the relay's
 * memory budget is most of what it is); under Deno and Node, `process.stdin`/`stdout`. Lines in
 * (newline-delimited JSON-RPC; a line over `maxLine` is skipped and reported, never buffered
 * whole), lines out in order, log lines to stderr.
 */
import process from "node:process";

interface BunSink {
  write(chunk: string): number;
  flush(): number | Promise<number>;
}
interface BunIO {
  stdin: { stream(): ReadableStream<Uint8Array> };
  stdout: { writer(): BunSink };
  stderr: { writer(): BunSink };
}
const bun = (globalThis as unknown as { Bun?: BunIO }).Bun;

export interface HostLines {
  /** Called once per line the host writes (without its line end), in order. */
  onLine(line: string): void;
  /** A line longer than `maxLine`: its first characters (to find an id), skipped. */
  onOversize(head: string): void;
}

/** Start reading the host's lines; resolves when stdin ends (or fails). */
export function readHostLines(handlers: HostLines, maxLine: number): Promise<void> {
  const splitter = new LineSplitter(handlers, maxLine);
  if (bun) {
    return (async () => {
      const decoder = new TextDecoder();
      try {
        for await (const chunk of bun.stdin.stream()) splitter.push(decoder.decode(chunk, { stream: true }));
      } catch { /* stdin failed: the same as its end */ }
      splitter.push(decoder.decode());
      splitter.end();
    })();
  }
  return new Promise((resolve) => {
    process.stdin.setEncoding("utf8");
    process.stdin.on("data", (d: string) => splitter.push(d));
    const done = () => (splitter.end(), resolve());
    process.stdin.once("end", done);
    process.stdin.once("close", done);
    process.stdin.once("error", done);
  });
}

/** Splits text into lines without joining a long line's pieces more than once. */
export class LineSplitter {
  readonly #handlers: HostLines;
  readonly #max: number;
  #parts: string[] = [];
  #size = 0;
  /** Inside a line already over the limit: drop until its end. */
  #skipping = false;

  constructor(handlers: HostLines, maxLine: number) {
    this.#handlers = handlers;
    this.#max = maxLine;
  }

  push(text: string): void {
    let start = 0;
    for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n", start)) {
      this.#take(text.slice(start, nl));
      this.#finish();
      start = nl + 1;
    }
    if (start < text.length) this.#take(text.slice(start));
  }

  /** stdin ended: a last line without a newline still counts. */
  end(): void {
    if (this.#size > 0 || this.#skipping) this.#finish();
  }

  #take(piece: string): void {
    if (this.#skipping) return;
    this.#parts.push(piece);
    this.#size += piece.length;
    if (this.#size > this.#max) {
      this.#handlers.onOversize(this.#parts.join("").slice(0, 2048));
      this.#parts = [];
      this.#size = 0;
      this.#skipping = true;
    }
  }

  #finish(): void {
    const skipped = this.#skipping;
    const line = this.#parts.length === 1 ? this.#parts[0] : this.#parts.join("");
    this.#parts = [];
    this.#size = 0;
    this.#skipping = false;
    if (skipped) return;
    const text = line.endsWith("\r") ? line.slice(0, -1) : line;
    if (text.trim() !== "") this.#handlers.onLine(text);
  }
}

export interface LineWriter {
  write(line: string): void;
  /** Resolves once everything written so far is handed to the OS (or the host stopped reading). */
  drain(): Promise<void>;
}

/** Writes whole lines to stdout, in order; a host that stopped reading is not an error. */
export function stdoutLines(): LineWriter {
  if (bun) {
    const sink = bun.stdout.writer();
    let broken = false;
    let last: Promise<unknown> = Promise.resolve();
    return {
      write: (line) => {
        if (broken) return;
        try {
          sink.write(line + "\n");
          last = Promise.resolve(sink.flush()).catch(() => (broken = true));
        } catch {
          broken = true;
        }
      },
      drain: async () => void await last,
    };
  }
  process.stdout.on("error", () => {/* the host is gone; its end is noticed on stdin */});
  return {
    write: (line) => void process.stdout.write(line + "\n"),
    drain: () => new Promise((resolve) => process.stdout.write("", () => resolve())),
  };
}

/** A stderr writer for the log (see `setLogSink`) and the last error line. */
export function stderrText(): { write(text: string): void; drain(): Promise<void> } {
  if (bun) {
    const sink = bun.stderr.writer();
    let last: Promise<unknown> = Promise.resolve();
    return {
      write: (text) => {
        try {
          sink.write(text);
          last = Promise.resolve(sink.flush()).catch(() => {});
        } catch { /* stderr closed */ }
      },
      drain: async () => void await last,
    };
  }
  return {
    write: (text) => {
      try {
        process.stderr.write(text);
      } catch { /* stderr closed */ }
    },
    drain: () => new Promise((resolve) => process.stderr.write("", () => resolve())),
  };
}
