/**
 * Garbage-collection pacing for a process that lives long, holds little, and makes a little garbage
 * per message (the relay). JavaScriptCore (Bun, the compiled binary) lets a small heap grow by
 * several MiB before it collects, so a relay's resident memory climbs with the calls it passes
 * on; a young-generation collection every so many messages (about 0.1 ms each) keeps the heap at
 * what it holds. V8 (Deno) paces itself: there this is a no-op.
 */

interface BunGc {
  gc(force: boolean): void;
}
const bun = (globalThis as unknown as { Bun?: BunGc }).Bun;

/** A tick to call once per message; every `every` ticks it asks for a collection (under Bun). */
export function gcPacer(every: number): () => void {
  if (!bun) return () => {};
  let n = 0;
  return () => {
    if (++n < every) return;
    n = 0;
    bun.gc(false);
  };
}
