/**
 * How the standalone service answers a POST, over real HTTP from the compiled binary: plain JSON
 * when the answer comes at once, SSE when the call streams (progress) or runs long (primed with an
 * event id and a retry hint, SEP-1699); a client whose stream dropped mid-call resumes it with GET
 * and Last-Event-ID and gets the answer; an id the service no longer has is a 400, not a hang.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { fixtures } from "../helpers/hermit.ts";
import { Reaper } from "../helpers/procs.ts";
import { type Service, startService, writeServiceAdapter } from "../helpers/service.ts";
import { tempDir } from "../helpers/tmp.ts";

interface SseEvent {
  id?: string;
  retry?: number;
  data: string;
}

/** Read SSE events from `res` until `stop` says so (or the stream ends); the reader is released. */
async function readEvents(
  res: Response,
  stop: (e: SseEvent, all: SseEvent[]) => boolean,
): Promise<SseEvent[]> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const events: SseEvent[] = [];
  let buf = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return events;
      buf += value;
      for (let end = buf.indexOf("\n\n"); end >= 0; end = buf.indexOf("\n\n")) {
        const block = buf.slice(0, end);
        buf = buf.slice(end + 2);
        if (block.startsWith(":")) continue; // keep-alive comment
        const e: SseEvent = { data: "" };
        for (const line of block.split("\n")) {
          const [k, ...rest] = line.split(":");
          const v = rest.join(":").trimStart();
          if (k === "id") e.id = v;
          else if (k === "retry") e.retry = Number(v);
          else if (k === "data") e.data += v;
        }
        events.push(e);
        if (stop(e, events)) return events;
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

describe("service: JSON or SSE per call, and resuming a dropped stream", () => {
  const tmp = tempDir();
  const reaper = new Reaper();
  let svc: Service;
  let headers: Record<string, string>;
  let nextId = 10;

  const call = (name: string, meta?: Record<string, unknown>) =>
    fetch(svc.url, {
      method: "POST",
      headers,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: ++nextId,
        method: "tools/call",
        params: { name, arguments: {}, ...(meta ? { _meta: meta } : {}) },
      }),
    });

  before(async () => {
    writeServiceAdapter(
      tmp.path,
      "streams",
      `exports: { tools: [test_simple_text, test_tool_with_progress, test_reconnection] }
mcp_servers:
  everything:
    command: node
    args: [${JSON.stringify(path.join(fixtures, "servers", "conformance_everything.mjs"))}]
`,
    );
    svc = await startService(tmp.path, {}, { reaper });
    const base = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${svc.token}`,
    };
    const init = await fetch(svc.url, {
      method: "POST",
      headers: base,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } },
      }),
    });
    await init.text();
    headers = {
      ...base,
      "mcp-session-id": init.headers.get("mcp-session-id")!,
      "mcp-protocol-version": "2025-11-25",
    };
    await (await fetch(svc.url, {
      method: "POST",
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    })).text();
  });
  after(async () => {
    await reaper.reap();
    tmp.cleanup();
  });

  it("a call answered at once comes back as plain JSON", async () => {
    const res = await call("test_simple_text");
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
    const body = await res.json();
    assert.equal(body.id, nextId);
    assert.match(JSON.stringify(body.result), /simple text response/);
  });

  it("a client that takes only a stream gets one, even for an answer that comes at once", async () => {
    const res = await fetch(svc.url, {
      method: "POST",
      headers: { ...headers, accept: "text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: ++nextId,
        method: "tools/call",
        params: { name: "test_simple_text", arguments: {} },
      }),
    });
    assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
    const events = await readEvents(res, (e) => e.data.includes('"result"'));
    assert.equal(JSON.parse(events.at(-1)!.data).id, nextId);
  });

  it("a call that reports progress streams: the progress events, then its answer", async () => {
    const res = await call("test_tool_with_progress", { progressToken: "p1" });
    assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
    const events = await readEvents(res, (e) => e.data.includes('"result"'));
    const messages = events.filter((e) => e.data).map((e) => JSON.parse(e.data));
    assert.ok(messages.some((m) => m.method === "notifications/progress"), JSON.stringify(messages));
    assert.equal(messages.at(-1).id, nextId);
    assert.ok(events.every((e) => e.id), "every event carries an id to resume from");
  });

  it("a long call streams, primed; dropped mid-call, it is resumed with Last-Event-ID and answered", async () => {
    const abort = new AbortController();
    const res = await fetch(svc.url, {
      method: "POST",
      headers,
      signal: abort.signal,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: ++nextId,
        method: "tools/call",
        params: { name: "test_reconnection", arguments: {} },
      }),
    });
    const id = nextId;
    assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
    const [priming] = await readEvents(res, () => true);
    assert.equal(priming.data, "");
    assert.ok(priming.id && priming.retry! > 0, JSON.stringify(priming));
    abort.abort(); // the connection drops while the call runs
    const resumed = await fetch(svc.url, {
      headers: { ...headers, accept: "text/event-stream", "last-event-id": priming.id! },
    });
    assert.equal(resumed.status, 200);
    const events = await readEvents(resumed, (e) => e.data.includes('"result"'));
    const answer = JSON.parse(events.at(-1)!.data);
    assert.equal(answer.id, id);
    assert.match(JSON.stringify(answer.result), /Reconnection test completed/);
  });

  it("a Last-Event-ID the service does not have is refused with 400", async () => {
    const res = await fetch(svc.url, {
      headers: { ...headers, accept: "text/event-stream", "last-event-id": "999999" },
    });
    assert.equal(res.status, 400);
    assert.match((await res.json()).error.message, /cannot resume/);
  });
});
