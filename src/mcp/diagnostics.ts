/**
 * What `hermit tools` and `hermit call` do, as domain functions: start the adapter's gateway in
 * process (under the watchdog), ask it, and stop everything again.
 */
import type { CallToolResult, ElicitRequest, ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { Exit, HermitError, mcpMessageOf } from "../errors.ts";
import type { ScanFinding } from "../gates/scan.ts";
import { SAFE_MODE_NOTICE } from "../gates/safe_mode.ts";
import { refusalLine } from "../gates/screen_manifest.ts";
import { quote } from "../manifest/locate.ts";
import { exportSources } from "../manifest/names.ts";
import type { Manifest } from "../manifest/types.ts";
import { stopAllGroups } from "../process/group.ts";
import { stoppingOnSignal } from "../process/interrupt.ts";
import { disableWatchdog, enableWatchdog } from "../process/supervisor.ts";
import { checkArguments } from "./arguments.ts";
import { Gateway, type GatewayOptions, REFUSED_META } from "./gateway.ts";
import { connectInProcess } from "./inprocess.ts";
import { startupWaitMs } from "./session.ts";

/** Start the adapter's gateway in process (under the watchdog), run `fn`, stop everything. */
export async function withGateway<T>(
  manifest: Manifest,
  verbose: boolean,
  fn: (g: Gateway) => Promise<T>,
  opts: GatewayOptions = {},
): Promise<T> {
  enableWatchdog();
  const gateway = new Gateway(manifest, { stderrLevel: verbose ? "info" : "debug", ...opts });
  return await stoppingOnSignal(async () => {
    try {
      await gateway.start(startupWaitMs());
      return await fn(gateway);
    } finally {
      await gateway.stop();
      await stopAllGroups();
      await disableWatchdog();
    }
  });
}

export interface ToolRow {
  name: string;
  source: string;
  raw?: string;
  trust: "full" | "untrusted";
  /** What hermit believes (gate 5). */
  readOnly: boolean;
  /** What the tool's server claims (its `readOnlyHint`); on an untrusted server, not believed. */
  claimsReadOnly: boolean;
  description: string;
  findings: ScanFinding[];
  /** How its process is confined, e.g. `fs: landlock abi 7; network: none (namespace)`. */
  sandbox: string;
}

/** One entry's confinement: what is enforced and what is not. */
export interface Confinement {
  where: string;
  summary: string;
  missing: string[];
  require: boolean;
}

export interface ToolsReport {
  adapter: string;
  safeMode: boolean;
  tools: ToolRow[];
  missing: { name: string; why: string }[];
  refused: { where: string; reason: string }[];
  sandbox: Confinement[];
}

export function effectiveTools(manifest: Manifest, verbose = false): Promise<ToolsReport> {
  return withGateway(manifest, verbose, async (gateway) => {
    const sandbox = gateway.sandbox.entries().map((e) => ({
      where: e.label,
      ...gateway.sandbox.describe(e),
    }));
    const confinement = (where: string) =>
      sandbox.find((c) => c.where === where)?.summary ?? "remote: not started by hermit";
    return {
      adapter: manifest.name,
      safeMode: gateway.safeMode,
      tools: gateway.catalog().map((e) => ({
        name: e.name,
        source: e.source.kind === "command" ? "command" : `mcp_servers.${e.source.server}`,
        raw: e.source.kind === "upstream" ? e.source.raw : undefined,
        trust: e.trust,
        readOnly: e.readOnly,
        claimsReadOnly: e.claimsReadOnly,
        description: e.tool.description ?? "",
        findings: e.findings,
        sandbox: confinement(
          e.source.kind === "command" ? `tools.${e.name}` : `mcp_servers.${e.source.server}`,
        ),
      })),
      missing: gateway.selfCheck().missing,
      refused: [
        ...gateway.refusals.map((r) => ({ where: r.where, reason: r.reason })),
        ...refusedAtStart(gateway),
      ],
      sandbox,
    };
  });
}

/**
 * Upstreams refused right before they would start (after interpolation: screening, a sandbox
 * that cannot be enforced, credentials over plain http), as `refused: WHERE: REASON` splits.
 */
function refusedAtStart(gateway: Gateway): { where: string; reason: string }[] {
  return gateway.upstreamStatus().filter((u) => u.refused).map((u) => {
    const where = `mcp_servers.${u.name}`;
    const line = u.lastError ?? "refused";
    const prefix = `refused: ${where}: `;
    return { where, reason: line.startsWith(prefix) ? line.slice(prefix.length) : line };
  });
}

export interface CallReport {
  result: CallToolResult;
  refused: boolean;
}

/** One call through the session server and the gateway, as a host's call goes. */
export function callOnce(
  manifest: Manifest,
  tool: string,
  args: Record<string, unknown>,
  opts: { verbose?: boolean; elicit?: (p: ElicitRequest["params"]) => Promise<ElicitResult> } = {},
): Promise<CallReport> {
  return withGateway(manifest, opts.verbose ?? false, async (gateway) => {
    refuseUnservable(gateway, manifest, tool);
    refuseInvalidArguments(gateway, tool, args);
    const conn = await connectInProcess(gateway, { elicit: opts.elicit });
    try {
      let result: CallToolResult;
      try {
        result = await conn.client.callTool({ name: tool, arguments: args }) as CallToolResult;
      } catch (err) {
        throw new HermitError(mcpMessageOf(err), Exit.usage); // exported: refuseUnservable said the rest
      }
      const refused = (result._meta as Record<string, unknown> | undefined)?.[REFUSED_META] === true;
      return { result, refused };
    } finally {
      await conn.close();
    }
  });
}

/**
 * Arguments that do not fit the tool's input schema are bad input (exit 2), said before the call
 * as the tool itself would say it: `invalid arguments for hello: name must be a string`.
 */
function refuseInvalidArguments(gateway: Gateway, tool: string, args: Record<string, unknown>): void {
  const entry = gateway.catalog().find((e) => e.name === tool);
  if (!entry) return;
  const r = checkArguments(tool, entry.tool.inputSchema, args);
  if (r.kind === "invalid") throw new HermitError(`invalid arguments for ${tool}: ${r.why}`, Exit.usage);
}

/**
 * A tool that is not served: not exported (exit 2, saying why, as `check` does: the MCP SDK would
 * answer "Method not found" when nothing is exported), or refused by policy (exit 4, the refusal).
 */
function refuseUnservable(gateway: Gateway, manifest: Manifest, tool: string): void {
  if (gateway.safeMode) throw new HermitError(`refused: ${SAFE_MODE_NOTICE}`, Exit.refused);
  const exported = manifest.exports.tools;
  if (!exported.includes(tool)) {
    throw new HermitError(
      Object.hasOwn(manifest.tools, tool)
        ? `tools.${tool} is defined but not in exports.tools, so it is not served: add it to exports: { tools: [...] }`
        : `unknown tool ${quote(tool)}; exported tools: ${exported.join(", ") || "none"}`,
      Exit.usage,
    );
  }
  if (gateway.catalog().some((e) => e.name === tool)) return;
  const servers = (exportSources(manifest).get(tool) ?? []).flatMap((s) =>
    s.kind === "upstream" ? [`mcp_servers.${s.server}`] : [`tools.${tool}`]
  );
  const refusal = gateway.refusals.find((r) => servers.includes(r.where));
  if (refusal) throw new HermitError(refusalLine(refusal), Exit.refused);
  const refusedAtSpawn = gateway.upstreamStatus().find((u) =>
    u.refused && servers.includes(`mcp_servers.${u.name}`)
  );
  if (refusedAtSpawn) throw new HermitError(refusedAtSpawn.lastError ?? "refused", Exit.refused);
  // withheld by hermit.lock: the gateway refuses the call with the lock's line (exit 4)
  if (gateway.withheld(tool)) return;
  // exported but not served (its server is down, needs a login, …): say why
  const missing = gateway.selfCheck().missing.find((m) => m.name === tool);
  if (missing) throw new HermitError(`${tool} is not available: ${missing.why}`, Exit.unexpected);
}
