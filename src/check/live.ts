/**
 * The live half of `hermit check`, the health rule: start the adapter for real (`hermit serve DIR`
 * as a child process, exactly as a host would), `initialize`, and compare `tools/list` with
 * `exports.tools`. What serve logged on stderr (warnings, scan findings) is reported too.
 */
import path from "node:path";
import process from "node:process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { mcpMessageOf } from "../errors.ts";
import type { Manifest } from "../manifest/types.ts";
import { plural } from "../lock/report.ts";
import { GroupStdioTransport } from "../mcp/stdio_transport.ts";
import { selfCommand } from "../platform/runtime.ts";
import { stoppingOnSignal } from "../process/interrupt.ts";
import { waitingOn } from "../progress.ts";
import { VERSION } from "../version.ts";
import { missingToolFindings, ServeLog, type UpstreamFailure } from "./serve_log.ts";
import type { Finding } from "./static.ts";

export interface LiveOptions {
  /** How long the adapter may take to answer `initialize` (upstreams start first). */
  timeoutMs: number;
  /** Extra arguments for `serve` (e.g. the relay's `--serve-url`). */
  serveArgs?: string[];
  /**
   * The upstreams that could not be started, when serve's own log does not have them (a relay:
   * they are in its service); default: what serve said.
   */
  failures?: () => Promise<UpstreamFailure[]>;
  /** The messages of the findings reported before the start: a refusal among them is not repeated. */
  reported?: ReadonlySet<string>;
}

/** Compare what a live server lists with what the manifest exports. Pure. */
export function compareTools(
  exported: readonly string[],
  served: readonly string[],
): { missing: string[]; extra: string[] } {
  const s = new Set(served);
  const e = new Set(exported);
  return { missing: exported.filter((n) => !s.has(n)), extra: served.filter((n) => !e.has(n)) };
}

/** What the live start waits on, for a person watching: the adapter's upstreams (npx may download). */
export function startLabel(m: Manifest): string {
  const what = m.serve.lifecycle === "standalone" ? `the ${m.name} service` : m.name;
  const stdio = Object.values(m.upstreams).filter((u) => u.enabled && u.kind === "stdio");
  if (stdio.length === 0) return `${what} to start and answer`;
  const downloads = stdio.some((u) => /^(npx|uvx|bunx|pnpx)(\.cmd|\.exe)?$/.test(path.basename(u.command!)));
  return `${what} to start its upstream servers: ${
    stdio.map((u) => `mcp_servers.${u.name} (${[u.command, ...u.args].join(" ")})`).join(", ")
  }${downloads ? "; a first npx/uvx run downloads the package" : ""}`;
}

/** The health rule's findings; interrupted (Ctrl-C), the started adapter is stopped before hermit ends. */
export function liveFindings(m: Manifest, opts: LiveOptions): Promise<Finding[]> {
  return stoppingOnSignal(() => startAndCompare(m, opts));
}

async function startAndCompare(m: Manifest, opts: LiveOptions): Promise<Finding[]> {
  const [cmd, ...pre] = selfCommand();
  const transport = new GroupStdioTransport({
    command: cmd,
    // a relay must not answer from its cache here: the health rule is about the real service
    args: [
      ...pre,
      "serve",
      m.file, // the manifest check was given, which need not be DIR/hermit.yaml
      ...(m.serve.lifecycle === "standalone" ? ["--no-warm-start"] : []),
      ...(opts.serveArgs ?? []),
    ],
    // JSON lines: what serve reports (an upstream that could not start) is read, not parsed from sentences
    env: { ...(process.env as Record<string, string>), HERMIT_LOG: "info", HERMIT_LOG_FORMAT: "json" },
    cwd: process.cwd(),
  });
  const heard = new ServeLog();
  transport.onStderrLine = (line) => heard.add(line);
  const client = new Client({ name: "hermit-check", version: VERSION }, { capabilities: {} });
  const findings: Finding[] = [];
  const t0 = performance.now();
  const waiting = waitingOn(startLabel(m));
  try {
    await client.connect(transport, { timeout: opts.timeoutMs });
    const initMs = Math.round(performance.now() - t0);
    // a server with no tools need not offer tools/list at all (no `tools` capability)
    const served = client.getServerCapabilities()?.tools
      ? (await client.listTools(undefined, { timeout: opts.timeoutMs })).tools.map((t) => t.name)
      : [];
    waiting.done();
    const { missing, extra } = compareTools(m.exports.tools, served);
    if (missing.length === 0 && extra.length === 0) {
      findings.push({
        level: "ok",
        area: "health",
        message: served.length === 0
          ? `live: initialize answered in ${initMs} ms; it serves no tools, as exports.tools says`
          : `live: initialize answered in ${initMs} ms; tools/list matches exports.tools (${
            plural(served.length, "tool")
          })`,
      });
    }
    const failures = missing.length && opts.failures ? await opts.failures() : heard.failures;
    findings.push(...missingToolFindings(m, missing, failures, heard.notServed, opts.reported));
    if (extra.length) {
      findings.push({
        level: "problem",
        area: "health",
        message: `live: served but not exported: ${extra.join(", ")}`,
      });
    }
  } catch (err) {
    const tail = heard.tail(3).join(" | ");
    findings.push({
      level: "problem",
      area: "health",
      message: `live: the adapter did not answer (${mcpMessageOf(err)})${
        tail ? `; serve said: ${tail}` : ""
      }`,
    });
  } finally {
    waiting.done();
    await client.close().catch(() => {});
    await transport.close().catch(() => {});
  }
  for (const line of heard.warnings) {
    findings.push({ level: "warning", area: "serve", message: `serve: ${line}` });
  }
  return findings;
}
