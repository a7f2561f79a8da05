/**
 * Gate 6, sampling and elicitation requested by an upstream: forwarded to the host only when it
 * supports them, within per-server limits — a sliding one-minute rate window, a timeout, a cap on
 * max tokens and on tool rounds; `includeContext` (other servers' context) dropped. URL-mode
 * elicitation is declined; a server's form is marked as the server's (`attributedForm`). Pure
 * decisions plus a small rate-window object.
 */
import type { CreateMessageRequest, ElicitRequest } from "@modelcontextprotocol/sdk/types.js";
import type { SamplingPolicy } from "../manifest/types.ts";
import { foldChar } from "./confusables.ts";
import { APPROVAL_FIELD } from "./trust.ts";

/** Sliding 60-second window. */
export class RateWindow {
  readonly #stamps: number[] = [];
  constructor(readonly perMinute: number) {}
  /** Record a request at `now` if the window has room; false when over the limit. */
  take(now = Date.now()): boolean {
    while (this.#stamps.length && now - this.#stamps[0] >= 60_000) this.#stamps.shift();
    if (this.#stamps.length >= this.perMinute) return false;
    this.#stamps.push(now);
    return true;
  }
}

export type SamplingVerdict =
  | { ok: true; params: CreateMessageRequest["params"] }
  | { ok: false; reason: string };

/** Count assistant turns that used tools: each is one tool round. */
export function toolRounds(params: CreateMessageRequest["params"]): number {
  return params.messages.filter((m) => {
    if (m.role !== "assistant") return false;
    const content = Array.isArray(m.content) ? m.content : [m.content];
    return content.some((c) => (c as { type?: string }).type === "tool_use");
  }).length;
}

export function checkSampling(
  params: CreateMessageRequest["params"],
  policy: SamplingPolicy,
  window: RateWindow,
  now = Date.now(),
): SamplingVerdict {
  if (!policy.enabled) return { ok: false, reason: "sampling is disabled for this server" };
  if (toolRounds(params) > policy.maxToolRounds) {
    return { ok: false, reason: `more than ${policy.maxToolRounds} tool rounds (max_tool_rounds)` };
  }
  if (!window.take(now)) {
    return { ok: false, reason: `more than ${policy.maxRpm} sampling requests a minute (max_rpm)` };
  }
  // includeContext asks the host to add what other servers said; to the host hermit is one server,
  // so even `thisServer` would hand this upstream what hermit's other upstreams returned
  const { includeContext: _, ...rest } = params;
  const next: CreateMessageRequest["params"] = {
    ...rest,
    maxTokens: Math.min(params.maxTokens, policy.maxTokensCap),
  };
  if (policy.model) next.modelPreferences = { ...params.modelPreferences, hints: [{ name: policy.model }] };
  else if (policy.allowedModels.length && params.modelPreferences?.hints) {
    const hints = params.modelPreferences.hints.filter((h) =>
      h.name && policy.allowedModels.includes(h.name)
    );
    next.modelPreferences = { ...params.modelPreferences, hints };
  }
  return { ok: true, params: next };
}

export type ElicitationVerdict = { ok: true } | { ok: false; reason: string };

/** An elicitation may be forwarded: enabled, form mode, and within the server's rate (`window`). */
export function checkElicitation(
  params: ElicitRequest["params"],
  enabled: boolean,
  window?: RateWindow,
): ElicitationVerdict {
  if (!enabled) return { ok: false, reason: "elicitation is disabled for this server" };
  if ((params as { mode?: string }).mode === "url") {
    return { ok: false, reason: "URL-mode elicitation is not supported" };
  }
  if (window && !window.take()) {
    return {
      ok: false,
      reason: `more than ${window.perMinute} elicitation requests a minute (sampling's max_rpm)`,
    };
  }
  return { ok: true };
}

/** Every way text breaks a line: CRLF, CR, LF, vertical tab, form feed, NEL, U+2028, U+2029. */
const LINE_BREAK = /\r\n|[\n\r\v\f\u0085\u2028\u2029]/;

/**
 * A server's elicitation message as the user sees it: `MCP server 'NAME' asks: …`, and every
 * further line of it marked `MCP server 'NAME': …`, so no line of it can pass for hermit's own
 * approval question (gate 5).
 */
export function attributedMessage(server: string, message: string): string {
  const [first, ...rest] = message.split(LINE_BREAK);
  return [`MCP server '${server}' asks: ${first}`, ...rest.map((l) => `MCP server '${server}': ${l}`)].join(
    "\n",
  );
}

/** A field's title or description as the user sees it: every line of it marked with the server. */
function attributedText(server: string, text: string): string {
  return text.split(LINE_BREAK).map((l) => `MCP server '${server}': ${l}`).join("\n");
}

/** A name as it reads: lower case, look-alikes folded to ASCII (an `аpprove` in Cyrillic is `approve`). */
const readAs = (name: string) => [...name.toLowerCase()].map(foldChar).join("").toLowerCase();

export type FormVerdict = { ok: true; params: ElicitRequest["params"] } | { ok: false; reason: string };

/**
 * A server's elicitation as the user sees it, so no part of it can pass for hermit's own approval
 * question (trust.ts): its message attributed (`attributedMessage`), every field titled
 * `MCP server 'NAME': <its title, or its name>` and its description marked the same way; refused
 * when a field reads as hermit's own (`approve`, in any case or look-alike letters).
 */
export function attributedForm(server: string, params: ElicitRequest["params"]): FormVerdict {
  const schema = (params as { requestedSchema?: { properties?: Record<string, unknown> } }).requestedSchema;
  const fields = Object.entries(schema?.properties ?? {});
  const reserved = fields.find(([name]) => readAs(name) === APPROVAL_FIELD);
  if (reserved) {
    return { ok: false, reason: `its field '${reserved[0]}' reads as hermit's own approval field` };
  }
  const message = attributedMessage(server, params.message);
  if (!schema?.properties) return { ok: true, params: { ...params, message } };
  const properties = Object.fromEntries(fields.map(([name, field]) => {
    const f = (field && typeof field === "object" ? field : {}) as Record<string, unknown>;
    const title = attributedText(server, typeof f.title === "string" ? f.title : name);
    const description = typeof f.description === "string"
      ? { description: attributedText(server, f.description) }
      : {};
    return [name, { ...f, title, ...description }];
  }));
  return {
    ok: true,
    params: { ...params, message, requestedSchema: { ...schema, properties } } as typeof params,
  };
}
