/**
 * Standalone-service helpers: a fixture adapter (the memory server from node_modules, started with
 * node so it starts fast, its graph in the adapter's `data/`, which its sandbox may write), the
 * endpoint file, starting a service in the foreground (`startService`) or as a daemon
 * (`startDaemon`) with every process tracked for cleanup, an HTTP MCP client with the bearer
 * token, and the processes that make up a service.
 */
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { Endpoint } from "../../src/service/endpoint.ts";
import { hermitBin, hermitEnv, root, runHermit } from "./hermit.ts";
import { alive, allProcesses, cmdline, kill, processesWhere, type Reaper, waitFor } from "./procs.ts";

export const memoryServer = path.join(
  root,
  "node_modules",
  "@modelcontextprotocol",
  "server-memory",
  "dist",
  "index.js",
);

/** Where the fixture adapter's memory server keeps its graph: `data/`, declared writable. */
export const graphFile = (dir: string) => path.join(dir, "data", "graph.jsonl");

export function writeStandaloneAdapter(
  dir: string,
  opts: { hostLaunch?: boolean; idle?: number; name?: string } = {},
): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, "hermit.yaml"),
    `name: ${opts.name ?? "shared"}
exports: { tools: [read_graph, create_entities, search_nodes] }
mcp_servers:
  memory:
    command: node
    args: [${JSON.stringify(memoryServer)}]
    env: { MEMORY_FILE_PATH: "${graphFile(dir)}" }
    tools: { include: [read_graph, create_entities, search_nodes], resources: false }
    sandbox: { write: [data/] }
serve:
  lifecycle: standalone
  host_launch: ${opts.hostLaunch ?? true}
  idle_shutdown_seconds: ${opts.idle ?? 300}
  instructions: SERVICE.md
`,
  );
  writeFileSync(path.join(dir, "SERVICE.md"), "Run it with hermit serve . --standalone\n");
}

/** The manifest lines for the memory server of the adapter in `dir`, offering `tools`. */
export function memoryUpstream(dir: string, tools: string[]): string {
  return `  memory:
    command: node
    args: [${JSON.stringify(memoryServer)}]
    env: { MEMORY_FILE_PATH: "${path.join(dir, "graph.jsonl")}" }
    tools: { include: [${tools.join(", ")}], resources: false }
`;
}

/**
 * A standalone adapter in `dir` (made if missing), with its SERVICE.md: `body` holds its exports,
 * mcp_servers and tools; `serve` more serve keys. No relay may launch it (host_launch: false).
 */
export function writeServiceAdapter(dir: string, name: string, body: string, serve = ""): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, "hermit.yaml"),
    `name: ${name}\n${body}serve:\n  lifecycle: standalone\n  host_launch: false\n  instructions: SERVICE.md\n${serve}`,
  );
  writeFileSync(path.join(dir, "SERVICE.md"), "hermit serve . --standalone\n");
}

/** `hermit ARGS` (a service), tracked by `reaper`, with its stderr and its exit: the code, else the signal. */
export function launchHermit(args: string[], reaper: Reaper) {
  const child = spawn(hermitBin(), args, {
    env: hermitEnv() as Record<string, string>,
    stdio: ["ignore", "ignore", "pipe"],
  });
  reaper.track(child.pid);
  let err = "";
  child.stderr!.setEncoding("utf8").on("data", (d) => (err += d));
  const exited = new Promise<number | string | null>((resolve) =>
    child.once("exit", (code, sig) => resolve(code ?? sig))
  );
  return { child, pid: child.pid!, exited, stderr: () => err };
}

/** The endpoint the service `pid` writes into `dir`, once it has. */
export async function endpointOf(
  dir: string,
  pid: number,
  stderr: () => string = () => "",
): Promise<Endpoint> {
  return await waitFor(() => {
    const ep = readEndpointFile(dir);
    return ep?.pid === pid ? ep : undefined;
  }, { timeoutMs: 60_000, what: () => `the service's endpoint file (stderr: ${stderr()})` });
}

export function readEndpointFile(dir: string): Endpoint | undefined {
  try {
    return JSON.parse(readFileSync(path.join(dir, ".serve", "endpoint"), "utf8"));
  } catch {
    return undefined;
  }
}

export interface Service {
  url: string;
  token: string;
  pid: number;
  stdout(): string;
  stderr(): string;
  /** SIGTERM, then wait for the process to exit (SIGKILL after 10 s). */
  stop(): Promise<void>;
}

/**
 * `hermit serve DIR --standalone [args]` in the foreground (behind `opts.prefix`, e.g. `prlimit …`,
 * which must exec it), in this process's environment plus `env` (with hermitEnv's HERMIT_HOME),
 * tracked by `opts.reaper` from the moment it is spawned;
 * ready once DIR/.serve/endpoint names its pid. When that does not happen in time (or it exits
 * first) it is killed and the promise rejects.
 */
export async function startService(
  dir: string,
  env: Record<string, string | undefined> = {},
  opts: { reaper?: Reaper; args?: string[]; timeoutMs?: number; prefix?: string[] } = {},
): Promise<Service> {
  const argv = [...(opts.prefix ?? []), hermitBin(), "serve", dir, "--standalone", ...(opts.args ?? [])];
  const child = spawn(argv[0], argv.slice(1), {
    env: hermitEnv({ ...process.env, ...env }) as Record<string, string>,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const pid = child.pid!;
  opts.reaper?.track(pid);
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (d) => (out += d));
  child.stderr.setEncoding("utf8").on("data", (d) => (err += d));
  const stop = async () => {
    if (!alive(pid)) return;
    child.kill("SIGTERM");
    await waitFor(() => !alive(pid), { timeoutMs: 10_000, what: "the service to stop" }).catch(() =>
      child.kill("SIGKILL")
    );
  };
  try {
    const ep = await waitFor(() => {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the service exited: ${err}`);
      const e = readEndpointFile(dir);
      return e?.pid === pid ? e : undefined;
    }, { timeoutMs: opts.timeoutMs ?? 60_000, what: () => `the service's endpoint file (stderr: ${err})` });
    return { url: ep.url, token: ep.token, pid, stdout: () => out, stderr: () => err, stop };
  } catch (e) {
    kill(pid);
    throw e;
  }
}

export interface Daemon extends Endpoint {
  /** What `serve --daemon` printed (the URL). */
  stdout: string;
  /** `hermit stop DIR`, for cleanup: never throws (the reaper gets whatever is left). */
  stop(): Promise<void>;
}

/**
 * `hermit serve DIR --standalone --daemon [args]` in this process's environment plus `opts.env`
 * (with hermitEnv's HERMIT_HOME); resolves once it has detached, its pid tracked by `opts.reaper`.
 */
export async function startDaemon(
  dir: string,
  opts: { reaper: Reaper; env?: Record<string, string | undefined>; args?: string[] },
): Promise<Daemon> {
  const env = { ...process.env, ...opts.env };
  const argv = ["serve", dir, "--standalone", "--daemon", ...(opts.args ?? [])];
  const r = await runHermit(argv, { env, timeoutMs: 60_000 }).finally(() =>
    opts.reaper.track(readEndpointFile(dir)?.pid)
  );
  const ep = readEndpointFile(dir);
  if (r.code !== 0 || !ep) {
    throw new Error(
      `hermit ${argv.join(" ")} exited ${r.code}${ep ? "" : " and wrote no endpoint file"}: ${r.stderr}`,
    );
  }
  return {
    ...ep,
    stdout: r.stdout,
    stop: async () => {
      await runHermit(["stop", dir], { env, timeoutMs: 30_000 }).catch(() => {});
    },
  };
}

/**
 * An MCP client on a service over Streamable HTTP, with its bearer token (none when `token` is
 * undefined).
 */
export async function connectHttp(
  svc: { url: string; token?: string },
  opts: { capabilities?: ClientCapabilities; setup?: (c: Client) => void } = {},
): Promise<Client> {
  const client = new Client({ name: "hermit-test-http", version: "0" }, {
    capabilities: opts.capabilities ?? {},
  });
  opts.setup?.(client);
  const transport = new StreamableHTTPClientTransport(new URL(svc.url), {
    requestInit: svc.token ? { headers: { Authorization: `Bearer ${svc.token}` } } : undefined,
  });
  await client.connect(transport, { timeout: 60_000 });
  return client;
}

/** End a client's session (DELETE, as a relay does) and close it. */
export async function endHttp(client: Client): Promise<void> {
  await (client.transport as StreamableHTTPClientTransport | undefined)?.terminateSession().catch(() => {});
  await client.close();
}

/** connectHttp by URL and token. */
export function httpClient(url: string, token?: string): Promise<Client> {
  return connectHttp({ url, token });
}

/** Live hermit service processes for the adapter in `dir`. */
export function servicePids(dir: string): number[] {
  return allProcesses().filter((p) => p.state !== "Z").map((p) => p.pid)
    .filter((pid) => {
      const c = cmdline(pid);
      return c.includes(`serve ${dir} --standalone`) || c.includes(`serve ${dir}/ --standalone`);
    });
}

/** Live memory-server processes started for the adapter in `dir`. */
export function memoryPids(dir: string): number[] {
  return processesWhere({ cmdline: memoryServer, environ: graphFile(dir) });
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}
