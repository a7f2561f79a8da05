/**
 * What a call through the gateway answers: the result, and whether a policy refused the call
 * (`hermit call` exits 4 then). A refusal is an error result with hermit's own mark, added after
 * sanitization, which strips hermit's `_meta` keys from what servers send, so none can forge it.
 * An error is an error result with the (already sanitized) text; a name nothing serves is the
 * typed `UnknownTool`. The gateway sanitizes; these only give the answers their shape.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { HERMIT_META_PREFIX } from "../gates/sanitize.ts";

export interface CallOutcome {
  result: CallToolResult;
  /** True when a policy (trust approval) refused the call: `hermit call` exits 4. */
  refused: boolean;
}

/** Marks a result refused by policy (hermit call exits 4 on it). */
export const REFUSED_META = `${HERMIT_META_PREFIX}refused`;

/** A result the gate stack let through (sanitized by the caller). */
export function answered(result: CallToolResult): CallOutcome {
  return { result, refused: false };
}

/** A call that failed, as an error result; `text` is sanitized by the caller. */
export function failedOutcome(text: string): CallOutcome {
  return { result: { isError: true, content: [{ type: "text", text }] }, refused: false };
}

/** A call refused by policy: an error result marked for `hermit call` (exit 4), added after sanitization. */
export function refusedOutcome(text: string): CallOutcome {
  return {
    result: { isError: true, content: [{ type: "text", text }], _meta: { [REFUSED_META]: true } },
    refused: true,
  };
}

export class UnknownTool extends Error {
  constructor(readonly tool: string, readonly exported: boolean) {
    super(exported ? `tool '${tool}' is exported but not available right now` : `unknown tool '${tool}'`);
    this.name = "UnknownTool";
  }
}
