/**
 * Gate 5, trust tiers. On an `untrusted` server every tool that does not declare
 * `readOnlyHint: true` needs the user's approval before it runs (before a lazy spawn too). The
 * approval is an MCP elicitation asking a yes/no question; only an explicit "accept" with the
 * box ticked counts. Pure: the decision, the question and the reading of the answer.
 */
import type { ElicitRequest, ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import type { Trust } from "../manifest/types.ts";

/** The trust table, frozen by a literal pin test. */
export function needsApproval(trust: Trust, readOnlyHint: unknown): boolean {
  return trust === "untrusted" && readOnlyHint !== true;
}

/** Anything but `full` is untrusted: unknown values fail closed. */
export function foldTrust(value: unknown): Trust {
  return value === "full" || value === undefined ? "full" : "untrusted";
}

export interface ApprovalSubject {
  server: string;
  tool: string;
  args: Record<string, unknown>;
}

export function approvalRequest(s: ApprovalSubject): ElicitRequest["params"] {
  const shown = JSON.stringify(s.args);
  return {
    message:
      `The untrusted MCP server '${s.server}' wants to run the tool '${s.tool}', which may modify external state.\n` +
      `Arguments: ${shown.length > 500 ? shown.slice(0, 500) + "…" : shown}\nAllow this call?`,
    requestedSchema: {
      type: "object",
      properties: {
        approve: {
          type: "boolean",
          title: `Run ${s.tool} on ${s.server}`,
          description: "Tick to allow this one call",
        },
      },
      required: ["approve"],
    },
  };
}

export type ApprovalOutcome = "approved" | "declined" | "cancelled" | "unavailable" | "failed";

/** Only `accept` with `approve: true` approves; every other answer refuses. */
export function readApproval(result: ElicitResult | undefined): ApprovalOutcome {
  if (!result) return "failed";
  if (result.action === "accept") return result.content?.approve === true ? "approved" : "declined";
  return result.action === "decline" ? "declined" : "cancelled";
}

export function refusalText(
  s: ApprovalSubject,
  outcome: Exclude<ApprovalOutcome, "approved">,
  detail?: string,
): string {
  const why = {
    declined: "the user declined it",
    cancelled: "the approval was cancelled or timed out",
    unavailable: "this client cannot ask the user for approval (no elicitation support)",
    failed: `asking for approval failed${detail ? ` (${detail})` : ""}`,
  }[outcome];
  return `refused: ${s.tool} on the untrusted server '${s.server}' needs the user's approval and ${why}; ` +
    "it was NOT run. Do not retry without explicit user direction.";
}
