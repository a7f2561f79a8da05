/**
 * The floor under the bench's relay row: the least a relay can be on hermit's runtime, compiled
 * the way hermit is. It reads the host's lines, POSTs each one, in order, to the service named by
 * an endpoint file (`DIR/.serve/endpoint`: URL and token; the session id the service hands out),
 * writes the answers back (plain JSON, or the `data:` lines of an SSE answer), and ends its
 * session when stdin ends. Nothing more: no launch, replay, retry, trust checks on `.serve/`, no
 * stream for the service's own requests. What hermit's relay costs over this program is what its
 * guarantees cost; what this program costs is Bun's stdio and fetch and the service behind them.
 *
 *   floor_relay ENDPOINT_FILE
 */
import { readFileSync } from "node:fs";
import process from "node:process";

const endpoint = JSON.parse(readFileSync(process.argv[2], "utf8")) as { url: string; token: string };
const headers: Record<string, string> = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  authorization: `Bearer ${endpoint.token}`,
};

async function forward(line: string): Promise<void> {
  const res = await fetch(endpoint.url, { method: "POST", headers, body: line });
  const session = res.headers.get("mcp-session-id");
  if (session) headers["mcp-session-id"] = session;
  const text = await res.text();
  if (!text) return;
  const messages = (res.headers.get("content-type") ?? "").startsWith("text/event-stream")
    ? text.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6))
    : [text.trim()];
  for (const m of messages) {
    if (!headers["mcp-protocol-version"]) {
      // the version the service agreed to in its answer to initialize goes on every later request
      const version = (JSON.parse(m) as { result?: { protocolVersion?: unknown } }).result?.protocolVersion;
      if (typeof version === "string") headers["mcp-protocol-version"] = version;
    }
    process.stdout.write(m + "\n");
  }
}

function fail(err: unknown): never {
  process.stderr.write(`floor relay: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}

let queue = Promise.resolve();
let pending = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk: string) => {
  pending += chunk;
  for (let nl = pending.indexOf("\n"); nl >= 0; nl = pending.indexOf("\n")) {
    const line = pending.slice(0, nl).trim();
    pending = pending.slice(nl + 1);
    if (line) queue = queue.then(() => forward(line)).catch(fail);
  }
});
process.stdin.on("end", async () => {
  await queue.catch(() => {});
  if (headers["mcp-session-id"]) {
    await fetch(endpoint.url, { method: "DELETE", headers }).catch(() => {});
  }
  process.exit(0);
});
