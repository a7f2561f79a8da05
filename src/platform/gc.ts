/**
 * Garbage-collection pacing for a process that lives long, holds little, and makes a little garbage
 * per message (the relay). JavaScriptCore (Bun, the compiled binary) lets a small heap grow by
 * several MiB before it collects, so a relay's resident memory climbs with the calls it passes
 * on; a young-generation collection every so many messages (about 0.1 ms each) keeps the heap at
 * what it holds. And for a process gone quiet (`idle_release.ts`), everything at once: a full
 * collection and the compiled code dropped. V8 (Deno) paces itself: there both are no-ops.
 */

interface BunGc {
  gc(force: boolean): void;
  /** Drops what the JIT compiled and returns free heap pages (JavaScriptCore's shrinkFootprint). */
  shrink?(): void;
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

/**
 * A full collection, then the JIT's code and free heap pages given back (under Bun; 5–10 ms). Returns
 * whether anything was asked of the runtime.
 */
export function releaseMemory(): boolean {
  if (!bun) return false;
  bun.gc(true);
  bun.shrink?.();
  return true;
}
