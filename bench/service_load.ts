/**
 * `deno run -A bench/service_load.ts [--sessions N] [--calls N] [--rounds N]`: N sessions calling
 * server-everything's `echo` at once over Streamable HTTP, against hermit's standalone service
 * (one upstream process for all sessions) and supergateway `--stateful` (its own upstream per
 * session), side by side in one run, alternating rounds. Each session is a lean raw-HTTP client
 * (fetch, JSON-RPC by hand, an SSE or JSON answer read as it comes) so that the load generator
 * costs both servers the same and little; `--sdk` uses the MCP SDK's client instead, and
 * `--relays` reaches hermit's service through N hermit relays (the MCP SDK's stdio client on
 * `hermit serve DIR`, as hosts run it) while supergateway gets the SDK's HTTP client. Prints
 * calls/s, p50 and p99 per round and the medians, and the ratio hermit : supergateway.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { everything, hermit, median, percentile, root, stdioClient } from "./lib.ts";
import { type Background, startService, startSupergateway } from "./service.ts";

const argv = process.argv.slice(2);
const num = (name: string, dflt: number) => {
  const i = argv.indexOf(name);
  return i >= 0 ? Number(argv[i + 1]) : dflt;
};
const SESSIONS = num("--sessions", 32);
const CALLS = num("--calls", 50);
const ROUNDS = num("--rounds", 3);
const RELAYS = argv.includes("--relays");
const SDK = argv.includes("--sdk") || RELAYS;

interface Session {
  call(i: number): Promise<void>;
  close(): Promise<void>;
}

/** A raw Streamable HTTP session: initialize, initialized, then tools/call by hand. */
async function rawSession(url: string, token?: string): Promise<Session> {
  const base: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    ...(token ? { authorization: `Bearer ${token}` } : {}),
  };
  const post = async (body: unknown, headers: Record<string, string>) => {
    const res = await fetch(url, {
      method: "POST",
      headers: { ...base, ...headers },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`HTTP ${res.status}: ${text.slice(0, 200)}`);
    return { res, text };
  };
  const init = await post({
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "load", version: "0" } },
  }, {});
  const sid = init.res.headers.get("mcp-session-id")!;
  const headers = { "mcp-session-id": sid, "mcp-protocol-version": "2025-06-18" };
  await post({ jsonrpc: "2.0", method: "notifications/initialized" }, headers);
  return {
    async call(i) {
      const { text } = await post({
        jsonrpc: "2.0",
        id: i + 1,
        method: "tools/call",
        params: { name: "echo", arguments: { message: `m${i}` } },
      }, headers);
      if (!text.includes(`Echo: m${i}`)) throw new Error(`unexpected answer: ${text.slice(0, 200)}`);
    },
    async close() {
      await fetch(url, { method: "DELETE", headers: { ...base, ...headers } }).then((r) => r.body?.cancel())
        .catch(() => {});
    },
  };
}

async function sdkSession(url: string, token?: string): Promise<Session> {
  const client = new Client({ name: "load", version: "0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: token ? { headers: { authorization: `Bearer ${token}` } } : undefined,
    }),
  );
  return {
    async call(i) {
      const r = await client.callTool({ name: "echo", arguments: { message: `m${i}` } });
      if (r.isError) throw new Error(JSON.stringify(r.content));
    },
    close: () => client.close(),
  };
}

interface Round {
  perSecond: number;
  p50: number;
  p99: number;
  connectMs: number;
}

/** A host session: the MCP SDK's stdio client on a hermit relay to the running service. */
async function relaySession(): Promise<Session> {
  const c = await stdioClient(hermit, ["serve", adapter]);
  return {
    async call(i) {
      const r = await c.client.callTool({ name: "echo", arguments: { message: `m${i}` } });
      if (r.isError) throw new Error(JSON.stringify(r.content));
    },
    close: () => c.close(),
  };
}

async function round(url: string, token?: string, relays = false): Promise<Round> {
  const t0 = performance.now();
  const sessions = await Promise.all(
    Array.from(
      { length: SESSIONS },
      () => relays ? relaySession() : (SDK ? sdkSession : rawSession)(url, token),
    ),
  );
  const connectMs = performance.now() - t0;
  // warm up: a few calls per session, unmeasured
  await Promise.all(sessions.map(async (s) => {
    for (let i = 0; i < 3; i++) await s.call(i);
  }));
  const times: number[] = [];
  const t1 = performance.now();
  await Promise.all(sessions.map(async (s) => {
    for (let i = 0; i < CALLS; i++) {
      const at = performance.now();
      await s.call(i);
      times.push(performance.now() - at);
    }
  }));
  const seconds = (performance.now() - t1) / 1000;
  await Promise.all(sessions.map((s) => s.close()));
  return {
    perSecond: times.length / seconds,
    p50: percentile(times, 50),
    p99: percentile(times, 99),
    connectMs,
  };
}

const work = mkdtempSync(path.join(os.tmpdir(), "hermit-load-"));
process.env.HERMIT_HOME = path.join(work, "state");
const adapter = path.join(work, "standalone");
mkdirSync(adapter);
writeFileSync(
  path.join(adapter, "hermit.yaml"),
  `name: load\nexports: { tools: [echo] }\nmcp_servers:\n  everything:\n    command: node\n    args: [${
    JSON.stringify(everything)
  }]\n    tools: { include: [echo] }\nserve:\n  lifecycle: standalone\n  host_launch: false\n  instructions: SERVICE.md\n`,
);
writeFileSync(path.join(adapter, "SERVICE.md"), "hermit serve . --standalone\n");

const results: Record<string, Round[]> = { hermit: [], supergateway: [] };
let svc: Background | undefined;
let gw: Background | undefined;
try {
  svc = await startService(hermit, adapter);
  const token =
    JSON.parse((await import("node:fs")).readFileSync(path.join(adapter, ".serve", "endpoint"), "utf8"))
      .token;
  gw = await startSupergateway(root, everything);
  console.log(
    `${SESSIONS} sessions × ${CALLS} calls of echo, ${
      SDK ? "MCP SDK clients" : "raw HTTP clients"
    }, ${os.cpus().length} cores, load ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`,
  );
  for (let r = 0; r < ROUNDS; r++) {
    for (
      const [name, url, tok] of [["hermit", svc.url, token], ["supergateway", gw.url, undefined]] as const
    ) {
      const x = await round(url, tok, RELAYS && name === "hermit");
      results[name].push(x);
      console.log(
        `round ${r + 1} ${name.padEnd(12)} ${x.perSecond.toFixed(0).padStart(6)} calls/s  p50 ${
          x.p50.toFixed(1)
        } ms  p99 ${x.p99.toFixed(1)} ms  (p99/p50 ${(x.p99 / x.p50).toFixed(1)})  connect ${
          x.connectMs.toFixed(0)
        } ms`,
      );
    }
  }
  const med = (name: string, k: keyof Round) => median(results[name].map((x) => x[k]));
  for (const name of ["hermit", "supergateway"]) {
    console.log(
      `median ${name.padEnd(12)} ${med(name, "perSecond").toFixed(0)} calls/s  p50 ${
        med(name, "p50").toFixed(1)
      } ms  p99 ${med(name, "p99").toFixed(1)} ms`,
    );
  }
  console.log(
    `hermit : supergateway = ${(med("hermit", "perSecond") / med("supergateway", "perSecond")).toFixed(2)}`,
  );
} finally {
  await svc?.stop();
  await gw?.stop();
  rmSync(work, { recursive: true, force: true });
}
