/**
 * Resources and prompts of the upstream servers, passed through when the server advertises them
 * and its manifest entry allows them (`tools.resources`, `tools.prompts`, both on by default).
 * Lists are merged across servers; reads, subscriptions and gets go to the one server that owns
 * the item (listed it, or a template of its matches it), never to the others when it fails; a
 * resource URI two servers list is served by neither (as a tool offered twice is not). Names and
 * URIs compare as hosts see them, hidden characters stripped; the owner is asked with its own.
 * Everything returned is sanitized (gate 4); prompts, resources and templates are scanned (gate 3).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type {
  CompleteRequest,
  CompleteResult,
  GetPromptResult,
  ListPromptsResult,
  ListResourcesResult,
  ListResourceTemplatesResult,
  ReadResourceResult,
} from "@modelcontextprotocol/sdk/types.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { UriTemplate } from "@modelcontextprotocol/sdk/shared/uriTemplate.js";
import { sanitizeContents, sanitizeErrorMessage, sanitizeValue, stripHidden } from "../gates/sanitize.ts";
import { messageOf } from "../errors.ts";
import { cleanError, contestedLine } from "./gateway_content_errors.ts";
import { type ScanFinding, scanPrompt, scanResource } from "../gates/scan.ts";
import { log } from "../log.ts";
import type { SessionPeer } from "./gateway_requests.ts";
import type { UpstreamConnection } from "./upstream.ts";
import { listAllPages } from "./upstream_tools.ts";

type Kind = "resources" | "prompts";

export class ContentRouter {
  readonly #upstreams: () => Iterable<UpstreamConnection>;
  readonly #resourceOwner = new Map<string, string>();
  /** A listed URI as hosts see it → as its server listed it, when they differ (hidden characters). */
  readonly #rawUri = new Map<string, string>();
  /** URIs more than one server listed (in the last listing), and which: served by none of them. */
  readonly #contested = new Map<string, string[]>();
  /** Each server's resource templates, from the last listing: a URI they match is theirs. */
  readonly #templates = new Map<string, UriTemplate[]>();
  /** A prompt's name as hosts see it (hidden characters stripped) → its server and its own name. */
  readonly #promptOwner = new Map<string, { server: string; raw: string }>();
  readonly #warned = new Set<string>();
  /** uri → the host sessions subscribed to it (each upstream gets one subscription per uri). */
  readonly #subscribers = new Map<string, Set<SessionPeer>>();

  constructor(upstreams: () => Iterable<UpstreamConnection>) {
    this.#upstreams = upstreams;
  }

  /** Upstreams that serve `kind`; with `runningOnly`, not those a lazy start has not started yet. */
  #serving(kind: Kind, runningOnly = false): UpstreamConnection[] {
    return [...this.#upstreams()].filter((u) =>
      u.config[kind] && u.capabilities?.[kind] && !(runningOnly && u.fromCache)
    );
  }

  /** Every page of `method` from each upstream serving `kind`; a failing one lists nothing. */
  async #collect<T>(
    kind: Kind,
    method: string,
    page: (c: Client, cursor?: string) => Promise<{ items: T[]; next?: string }>,
    runningOnly = false,
  ): Promise<[UpstreamConnection, T[]][]> {
    return await Promise.all(
      this.#serving(kind, runningOnly).map(async (u): Promise<[UpstreamConnection, T[]]> => {
        try {
          const items = await u.withClient((c) =>
            listAllPages(`mcp_servers.${u.name}: ${method}`, (cursor) => page(c, cursor))
          );
          return [u, items];
        } catch (err) {
          // a server that does not implement the method (templates are optional) lists nothing
          if ((err as { code?: unknown }).code !== ErrorCode.MethodNotFound) {
            log.warn(
              `mcp_servers.${u.name}: listing ${kind} failed: ${sanitizeErrorMessage(messageOf(err))}`,
            );
          }
          return [u, []];
        }
      }),
    );
  }

  /** With `runningOnly` (the start-up scan), upstreams not started yet are not started for it. */
  async listResources(runningOnly = false): Promise<ListResourcesResult> {
    const per = await this.#collect("resources", "resources/list", async (c, cursor) => {
      const r = await c.listResources(cursor ? { cursor } : undefined);
      return { items: r.resources, next: r.nextCursor };
    }, runningOnly);
    // a URI two servers list is served by neither: the later one took the first one's reads; URIs
    // compare as hosts see them, hidden characters stripped
    const listers = new Map<string, string[]>();
    for (const [u, items] of per) {
      for (const r of items) {
        const names = listers.get(stripHidden(r.uri)) ?? [];
        if (!names.includes(u.name)) listers.set(stripHidden(r.uri), [...names, u.name]);
      }
    }
    const served = new Set<string>();
    const resources = per.flatMap(([u, items]) =>
      items.flatMap((r) => {
        const uri = stripHidden(r.uri);
        const names = listers.get(uri)!;
        if (names.length > 1) {
          this.#contested.set(uri, names);
          this.#resourceOwner.delete(uri);
          this.#warnOnce(`resource:${uri}`, contestedLine(uri, names));
          return [];
        }
        if (served.has(uri)) return []; // listed twice by its server: the first is served
        served.add(uri);
        this.#contested.delete(uri);
        this.#resourceOwner.set(uri, u.name);
        if (uri !== r.uri) this.#rawUri.set(uri, r.uri);
        this.#reportScan(u.name, scanResource(r));
        return [sanitizeValue(r)];
      })
    );
    return { resources };
  }

  async listResourceTemplates(runningOnly = false): Promise<ListResourceTemplatesResult> {
    const per = await this.#collect("resources", "resources/templates/list", async (c, cursor) => {
      const r = await c.listResourceTemplates(cursor ? { cursor } : undefined);
      return { items: r.resourceTemplates, next: r.nextCursor };
    }, runningOnly);
    for (const [u, items] of per) {
      for (const t of items) this.#reportScan(u.name, scanResource(t));
      this.#templates.set(
        u.name,
        items.flatMap((t) => {
          try {
            return [new UriTemplate(t.uriTemplate)];
          } catch {
            return []; // not a template the SDK can read: it claims nothing
          }
        }),
      );
    }
    return { resourceTemplates: per.flatMap(([, items]) => items.map((t) => sanitizeValue(t))) };
  }

  /** A read goes to the one server that owns the URI, and only to it: a failure is its answer. */
  async readResource(uri: string): Promise<ReadResourceResult> {
    const owner = await this.#ownerOf(uri);
    try {
      const raw = this.#rawUri.get(uri) ?? uri;
      return sanitizeContents(await owner.withClient((c) => c.readResource({ uri: raw })));
    } catch (err) {
      throw cleanError(err);
    }
  }

  /** With `runningOnly` (the start-up scan), upstreams not started yet are not started for it. */
  async listPrompts(runningOnly = false): Promise<ListPromptsResult> {
    const per = await this.#collect("prompts", "prompts/list", async (c, cursor) => {
      const r = await c.listPrompts(cursor ? { cursor } : undefined);
      return { items: r.prompts, next: r.nextCursor };
    }, runningOnly);
    const seen = new Map<string, string>();
    const prompts = [];
    for (const [u, items] of per) {
      for (const p of items) {
        // names that differ only by hidden characters reach hosts as one: the later is a duplicate
        const name = stripHidden(p.name);
        const first = seen.get(name);
        if (first) {
          const by = first === u.name ? "twice by" : `by mcp_servers.${first} and`;
          const hidden = name === p.name ? "" : " (the same once hidden characters are stripped)";
          this.#warnOnce(
            `prompt:${u.name}:${p.name}`,
            `prompt '${name}' is offered ${by} mcp_servers.${u.name}${hidden}; serving the first`,
          );
          continue;
        }
        seen.set(name, u.name);
        this.#promptOwner.set(name, { server: u.name, raw: p.name });
        this.#reportScan(u.name, scanPrompt(p));
        prompts.push(sanitizeValue(p));
      }
    }
    return { prompts };
  }

  async getPrompt(name: string, args: Record<string, string> | undefined): Promise<GetPromptResult> {
    if (!this.#promptOwner.has(name)) await this.listPrompts();
    const { server, raw } = this.#promptOwner.get(name) ?? {};
    const owner = this.#serving("prompts").find((u) => u.name === server);
    if (!owner) throw new McpError(ErrorCode.InvalidParams, `unknown prompt '${name}'`);
    try {
      return sanitizeValue(await owner.withClient((c) => c.getPrompt({ name: raw!, arguments: args })));
    } catch (err) {
      throw cleanError(err);
    }
  }

  /** `completion/complete`: to the owner of the prompt, or to a server that completes resource templates. */
  async complete(params: CompleteRequest["params"]): Promise<CompleteResult> {
    const ref = params.ref as { type: string; name?: string; uri?: string };
    if (ref.type === "ref/prompt" && ref.name && !this.#promptOwner.has(ref.name)) await this.listPrompts();
    const prompt = ref.type === "ref/prompt" ? this.#promptOwner.get(ref.name ?? "") : undefined;
    const owner = prompt?.server;
    if (prompt) params = { ...params, ref: { ...ref, name: prompt.raw } as typeof params.ref };
    const candidates = [...this.#upstreams()].filter((u) =>
      u.capabilities?.completions && (!owner || u.name === owner)
    );
    let lastError: unknown;
    for (const u of candidates) {
      try {
        return sanitizeValue(await u.withClient((c) => c.complete(params)));
      } catch (err) {
        lastError = err;
      }
    }
    if (lastError) throw cleanError(lastError);
    return { completion: { values: [], hasMore: false } };
  }

  /** `resources/subscribe` for one host session; the owning upstream is subscribed once. */
  async subscribe(uri: string, peer: SessionPeer): Promise<void> {
    const subs = this.#subscribers.get(uri) ?? new Set();
    if (subs.size === 0) {
      const owner = await this.#ownerOf(uri);
      const raw = this.#rawUri.get(uri) ?? uri;
      await owner.withClient((c) => c.subscribeResource({ uri: raw })).catch((err) => {
        throw cleanError(err);
      });
    }
    subs.add(peer);
    this.#subscribers.set(uri, subs);
  }

  async unsubscribe(uri: string, peer: SessionPeer): Promise<void> {
    const subs = this.#subscribers.get(uri);
    if (!subs?.delete(peer) || subs.size > 0) return;
    this.#subscribers.delete(uri);
    const owner = await this.#ownerOf(uri).catch(() => undefined);
    await owner?.withClient((c) => c.unsubscribeResource({ uri: this.#rawUri.get(uri) ?? uri })).catch(
      () => {},
    );
  }

  /** A session is gone: drop its subscriptions. */
  forget(peer: SessionPeer): void {
    for (const uri of [...this.#subscribers.keys()]) void this.unsubscribe(uri, peer);
  }

  /** `notifications/resources/updated` from an upstream, to the sessions subscribed to that uri. */
  updated(params: Record<string, unknown>): void {
    const subs = this.#subscribers.get(stripHidden(String(params.uri)));
    const clean = sanitizeValue(params);
    for (const peer of subs ?? []) void peer.notify("notifications/resources/updated", clean).catch(() => {});
  }

  /**
   * The server a URI belongs to: the one that listed it, else the one whose resource template
   * matches it (first in manifest order), else the only server with resources. Never a guess
   * among several: an unknown URI is an error, not a question put to every server, and so is one
   * several servers listed.
   */
  async #ownerOf(uri: string): Promise<UpstreamConnection> {
    const contested = () => {
      const names = this.#contested.get(uri);
      if (names) throw new McpError(ErrorCode.InvalidParams, contestedLine(uri, names));
    };
    contested();
    const serving = this.#serving("resources");
    const listed = () => serving.find((u) => u.name === this.#resourceOwner.get(uri));
    const templated = () =>
      serving.find((u) => this.#templates.get(u.name)?.some((t) => t.match(uri) !== null));
    let owner = listed() ?? templated();
    if (!owner && serving.length > 1) {
      await this.listResources();
      contested();
      owner = listed();
      if (!owner) await this.listResourceTemplates();
      owner ??= templated();
    }
    owner ??= serving.length === 1 ? serving[0] : undefined;
    if (!owner) throw new McpError(ErrorCode.InvalidParams, `unknown resource ${uri}: no server lists it`);
    return owner;
  }

  /** Each scan finding about a server's item is logged once. */
  #reportScan(server: string, findings: ScanFinding[]): void {
    for (const f of findings) {
      this.#warnOnce(
        `scan:${server}:${f.where}:${f.rule}`,
        `scan: mcp_servers.${server} ${f.where}: ${f.rule}: "${f.excerpt}"`,
      );
    }
  }

  #warnOnce(key: string, message: string): void {
    if (this.#warned.has(key)) return;
    this.#warned.add(key);
    log.warn(message);
  }
}
