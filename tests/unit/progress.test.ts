/**
 * The progress line: shown only on a terminal, only once the wait has lasted its moment, rewritten
 * in place, erased at the end, fitted to the terminal's width.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { clearProgressLine, progressLine, waitingOn, whileWaiting } from "../../src/progress.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function stream(isTTY: boolean, columns?: number) {
  const out: string[] = [];
  return { out, s: { isTTY, columns, write: (t: string) => void out.push(t) } };
}

describe("progress", () => {
  it("the line names what is waited on and for how long, fitted to the width", () => {
    assert.equal(
      progressLine("the notes service to start", 3400),
      "hermit: waiting for the notes service to start… 3 s",
    );
    const long = progressLine("x".repeat(200), 12_000, 60);
    assert.equal(long.length, 59);
    assert.match(long, /^hermit: waiting for x+… 12 s$/);
  });

  it("on a terminal: nothing before the moment, then the line, then erased", async () => {
    const { out, s } = stream(true);
    const w = waitingOn("npx", { stream: s, afterMs: 100 });
    await sleep(20);
    assert.deepEqual(out, [], "a short wait shows nothing");
    await sleep(200);
    assert.equal(out.length, 1);
    assert.equal(out[0], "\r\x1b[Khermit: waiting for npx… 0 s");
    w.done();
    assert.equal(out.at(-1), "\r\x1b[K", "erased when the wait ends");
    const n = out.length;
    await sleep(1200);
    assert.equal(out.length, n, "nothing after done()");
  });

  it("a log line written during the wait erases the line first, so the two are not glued", async () => {
    const { out, s } = stream(true);
    const w = waitingOn("npx", { stream: s, afterMs: 0 });
    await sleep(30);
    assert.equal(out.length, 1);
    clearProgressLine(); // what log.ts does before each line
    assert.equal(out.at(-1), "\r\x1b[K");
    const n = out.length;
    w.done();
    assert.equal(out.length, n, "already erased: done() writes nothing more");
    clearProgressLine();
    assert.equal(out.length, n, "no wait shown: nothing to erase");
  });

  it("what it names (an adapter's command line) cannot drive the terminal", async () => {
    const { out, s } = stream(true, 200);
    const w = waitingOn("node x \x1b[2K\x1b]52;c;ZXZpbA==\x07\x1b[8m", { stream: s, afterMs: 0 });
    await sleep(50);
    w.done();
    // deno-lint-ignore no-control-regex
    assert.doesNotMatch(out[0].slice("\r\x1b[K".length), /[\x00-\x1f\x7f-\x9f]/, JSON.stringify(out[0]));
    assert.match(out[0], /\\u001b\[8m/);
  });

  it("a wait that ends before the moment leaves nothing, not even an erase", async () => {
    const { out, s } = stream(true);
    assert.equal(await whileWaiting("quick", Promise.resolve(7), { stream: s, afterMs: 100 }), 7);
    await sleep(150);
    assert.deepEqual(out, []);
  });

  it("not a terminal: nothing at all", async () => {
    const { out, s } = stream(false);
    await whileWaiting("slow", sleep(150), { stream: s, afterMs: 0 });
    assert.deepEqual(out, []);
  });
});
