/**
 * The gateway: the one choke point between hosts and the adapter's tools. It owns the upstream
 * connections and the command tools, builds the advertised tool list (exactly `exports.tools`, in
 * that order), and sends every call through the gate stack: screening and the kill switch at
 * load, the trust gate before a call, sanitization of every result, limits on server-to-client
 * requests. Every entry path (stdio serve, the HTTP service, the relay's service, `hermit call`)
 * calls `callTool` here. Transport-agnostic: hosts are `SessionPeer`s.
 */
import process from "node:process";
import type { CallToolResult, ServerCapabilities, Tool } from "@modelcontextprotocol/sdk/types.js";
import { messageOf } from "../errors.ts";
import { SAFE_MODE_NOTICE, safeMode } from "../gates/safe_mode.ts";
import { sanitizeErrorMessage, sanitizeResult, stripTags } from "../gates/sanitize.ts";
import { type ScanFinding, scanText, scanTool } from "../gates/scan.ts";
import { type Refusal, refusalLine, screenManifest } from "../gates/screen_manifest.ts";
import { needsApproval } from "../gates/trust.ts";
import { log } from "../log.ts";
import { contextFrom } from "../manifest/interpolate.ts";
import type { CommandTool, Manifest, Upstream } from "../manifest/types.ts";
import { type CommandToolContext, commandToolDefinition, runCommandTool } from "./command_tool.ts";
import { ContentRouter } from "./gateway_content.ts";
import { askApproval, type CallContext, ServerRequests } from "./gateway_requests.ts";
import { UpstreamConnection, type UpstreamOwner } from "./upstream.ts";
import type { TransportContext } from "./upstream_transport.ts";

export type { CallContext, SessionPeer } from "./gateway_requests.ts";

export interface GatewayOptions {
  env?: Readonly<Record<string, string | undefined>>;
  cwd?: string;
  platform?: NodeJS.Platform;
  /** How upstream stderr lines are logged (default info). */
  stderrLevel?: "info" | "debug";
}

export interface CatalogEntry {
  name: string;
  tool: Tool;
  source: { kind: "command"; tool: CommandTool } | { kind: "upstream"; server: string; raw: string };
  readOnly: boolean;
  trust: "full" | "untrusted";
  findings: ScanFinding[];
}

export interface CallOutcome {
  result: CallToolResult;
  /** True when a policy (trust approval) refused the call: `hermit call` exits 4. */
  refused: boolean;
}

type ChangeKind = "tools" | "prompts" | "resources";

export class Gateway implements UpstreamOwner {
  readonly manifest: Manifest;
  readonly refusals: Refusal[];
  readonly safeMode: boolean;
  readonly upstreams = new Map<string, UpstreamConnection>();
  readonly commandTools = new Map<string, CommandTool>();
  readonly requests: ServerRequests;
  readonly content = new ContentRouter(() => this.upstreams.values());
  readonly #env: Readonly<Record<string, string | undefined>>;
  readonly #cwd: string;
  readonly #platform: NodeJS.Platform;
  readonly #stderrLevel: "info" | "debug";
  readonly #listeners = new Set<(kind: ChangeKind) => void>();
  readonly #scanned = new Map<string, ScanFinding[]>();
  readonly #reported = new Set<string>();

  constructor(manifest: Manifest, opts: GatewayOptions = {}) {
    this.manifest = manifest;
    this.#env = opts.env ?? process.env;
    this.#cwd = opts.cwd ?? process.cwd();
    this.#platform = opts.platform ?? process.platform;
    this.#stderrLevel = opts.stderrLevel ?? "info";
    this.safeMode = safeMode(this.#env);
    this.refusals = screenManifest(manifest);
    this.requests = new ServerRequests(this);
    if (this.safeMode) {
      log.warn(SAFE_MODE_NOTICE);
      return;
    }
    for (const r of this.refusals) log.error(refusalLine(r));
    const refused = new Set(this.refusals.map((r) => r.where));
    for (const u of Object.values(manifest.upstreams)) {
      if (u.enabled && !refused.has(`mcp_servers.${u.name}`)) {
        this.upstreams.set(u.name, new UpstreamConnection(u, this));
      }
    }
    for (const t of Object.values(manifest.tools)) {
      if (!refused.has(`tools.${t.name}`)) this.commandTools.set(t.name, t);
    }
  }

  /** Connect the upstreams; resolves when all have answered or failed, or after `waitMs`. */
  async start(waitMs = 30_000): Promise<void> {
    const all = [...this.upstreams.values()].map((u) => u.start());
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([Promise.allSettled(all), new Promise((r) => (timer = setTimeout(r, waitMs)))]);
    clearTimeout(timer);
    for (const u of this.upstreams.values()) {
      if (u.instructions) {
        this.#report(`mcp_servers.${u.name}`, scanText("initialize.instructions", u.instructions));
      }
    }
  }

  async stop(): Promise<void> {
    await Promise.all([...this.upstreams.values()].map((u) => u.stop()));
  }

  onChange(listener: (kind: ChangeKind) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #emit(kind: ChangeKind): void {
    for (const l of this.#listeners) l(kind);
  }

  /** The advertised tools: `exports.tools` order, only those something provides right now. */
  catalog(): CatalogEntry[] {
    const out: CatalogEntry[] = [];
    for (const name of this.manifest.exports.tools) {
      const found = this.#sourcesOf(name);
      if (found.length === 1) out.push(found[0]);
      else if (found.length > 1) {
        this.#once(`collision:${name}`, () =>
          log.error(
            `'${name}' is provided by ${
              found.map(describe).join(" and ")
            }; neither is served until one is renamed`,
          ));
      }
    }
    return out;
  }

  #sourcesOf(name: string): CatalogEntry[] {
    const found: CatalogEntry[] = [];
    const cmd = this.commandTools.get(name);
    if (cmd) {
      found.push({
        name,
        tool: commandToolDefinition(cmd),
        source: { kind: "command", tool: cmd },
        readOnly: cmd.readOnly,
        trust: "full",
        findings: [],
      });
    }
    for (const u of this.upstreams.values()) {
      for (const t of u.tools) {
        if (t.exported !== name) continue;
        const tool: Tool = {
          ...t.tool,
          name,
          description: t.tool.description === undefined ? undefined : stripTags(t.tool.description),
        };
        const findings = this.#scan(u.name, t.tool);
        found.push({
          name,
          tool,
          source: { kind: "upstream", server: u.name, raw: t.raw },
          readOnly: t.tool.annotations?.readOnlyHint === true,
          trust: u.config.trust,
          findings,
        });
      }
    }
    return found;
  }

  #scan(server: string, tool: Tool): ScanFinding[] {
    const key = `${server}\u0000${JSON.stringify(tool)}`;
    let findings = this.#scanned.get(key);
    if (!findings) {
      findings = scanTool(tool);
      this.#scanned.set(key, findings);
      this.#report(`mcp_servers.${server}`, findings);
    }
    return findings;
  }

  #report(where: string, findings: ScanFinding[]): void {
    for (const f of findings) {
      this.#once(
        `scan:${where}:${f.where}:${f.rule}`,
        () => log.warn(`scan: ${where} ${f.where}: ${f.rule}: "${f.excerpt}"`),
      );
    }
  }

  #once(key: string, fn: () => void): void {
    if (this.#reported.has(key)) return;
    this.#reported.add(key);
    fn();
  }

  listTools(): Tool[] {
    return this.catalog().map((e) => e.tool);
  }

  capabilities(): ServerCapabilities {
    const caps: ServerCapabilities = {};
    if (this.manifest.exports.tools.length > 0) caps.tools = { listChanged: true };
    const backed = (allow: "resources" | "prompts") =>
      [...this.upstreams.values()].some((u) => u.config[allow] && u.capabilities?.[allow]);
    if (backed("resources")) caps.resources = { listChanged: true };
    if (backed("prompts")) caps.prompts = { listChanged: true };
    return caps;
  }

  async callTool(
    name: string,
    args: Record<string, unknown>,
    ctx: CallContext = {},
  ): Promise<CallToolResult> {
    return (await this.callToolDetailed(name, args, ctx)).result;
  }

  async callToolDetailed(
    name: string,
    args: Record<string, unknown>,
    ctx: CallContext = {},
  ): Promise<CallOutcome> {
    const entry = this.catalog().find((e) => e.name === name);
    if (!entry) throw new UnknownTool(name, this.manifest.exports.tools.includes(name));
    const { source } = entry;
    if (source.kind === "command") {
      return {
        result: sanitizeResult(await runCommandTool(source.tool, args, this.commandContext(), ctx.signal)),
        refused: false,
      };
    }
    const upstream = this.upstreams.get(source.server)!;
    if (needsApproval(entry.trust, entry.readOnly)) {
      const refusal = await askApproval(upstream.config, name, args, ctx);
      if (refusal) {
        return {
          result: {
            isError: true,
            content: [{ type: "text", text: refusal }],
            _meta: { [REFUSED_META]: true },
          },
          refused: true,
        };
      }
    }
    const release = this.requests.enter(source.server, ctx);
    try {
      const result = await upstream.callTool(source.raw, args, {
        signal: ctx.signal,
        onprogress: ctx.onprogress,
        readOnly: entry.readOnly,
      });
      return { result: sanitizeResult(result), refused: false };
    } catch (err) {
      return {
        result: { isError: true, content: [{ type: "text", text: sanitizeErrorMessage(messageOf(err)) }] },
        refused: false,
      };
    } finally {
      release();
    }
  }

  commandContext(): CommandToolContext {
    return {
      adapterDir: this.manifest.dir,
      interpolation: contextFrom(this.#env, this.#cwd),
      parentEnv: this.#env,
      platform: this.#platform,
    };
  }

  /** Names exported but not provided, and upstream tools offered but not exported. */
  selfCheck(): {
    missing: { name: string; why: string }[];
    unexported: { server: string; raw: string; exported: string }[];
  } {
    const served = new Set(this.catalog().map((e) => e.name));
    const missing = this.manifest.exports.tools.filter((n) => !served.has(n)).map((name) => ({
      name,
      why: this.#whyMissing(name),
    }));
    const exported = new Set(this.manifest.exports.tools);
    const unexported = [...this.upstreams.values()].flatMap((u) =>
      u.tools.filter((t) => !exported.has(t.exported)).map((t) => ({
        server: u.name,
        raw: t.raw,
        exported: t.exported,
      }))
    );
    return { missing, unexported };
  }

  #whyMissing(name: string): string {
    if (this.safeMode) return "safe mode is on";
    const refusal = this.refusals.find((r) => r.where === `tools.${name}`);
    if (refusal) return refusal.reason;
    if (this.#sourcesOf(name).length > 1) return "more than one source provides it";
    const down = [...this.upstreams.values()].filter((u) => u.state !== "connected");
    if (down.length) {
      return `not offered by a running server; ${
        down.map((u) => `mcp_servers.${u.name} is ${u.state}${u.lastError ? ` (${u.lastError})` : ""}`).join(
          "; ",
        )
      }`;
    }
    return "no command tool defines it and no upstream server offers it";
  }

  logSelfCheck(): void {
    const { missing, unexported } = this.selfCheck();
    for (const m of missing) log.warn(`exports.tools lists '${m.name}', but it is not served: ${m.why}`);
    for (const u of unexported) {
      log.info(
        `mcp_servers.${u.server} offers '${u.raw}'${
          u.exported !== u.raw ? ` (as '${u.exported}')` : ""
        }, which exports.tools does not list; not reachable`,
      );
    }
  }

  // UpstreamOwner
  transportContext(_u: Upstream): TransportContext {
    return {
      adapterDir: this.manifest.dir,
      interpolation: contextFrom(this.#env, this.#cwd),
      parentEnv: this.#env,
      platform: this.#platform,
    };
  }
  onToolsChanged(): void {
    this.#emit("tools");
  }
  onPromptsChanged(): void {
    this.#emit("prompts");
  }
  onResourcesChanged(): void {
    this.#emit("resources");
  }
  onStderrLine(server: string, line: string): void {
    const text = `[${server}] ${line}`;
    if (this.#stderrLevel === "info") log.info(text);
    else log.debug(text);
  }
  handleServerRequest(
    server: string,
    method: string,
    params: unknown,
    signal: AbortSignal,
  ): Promise<unknown> {
    return this.requests.handle(server, method, params, signal);
  }
}

/** Marks a result refused by policy (hermit call exits 4 on it). */
export const REFUSED_META = "dev.hermit/refused";

export class UnknownTool extends Error {
  constructor(readonly tool: string, readonly exported: boolean) {
    super(exported ? `tool '${tool}' is exported but not available right now` : `unknown tool '${tool}'`);
  }
}

function describe(e: CatalogEntry): string {
  return e.source.kind === "command"
    ? `tools.${e.name}`
    : `mcp_servers.${e.source.server} ('${e.source.raw}')`;
}
