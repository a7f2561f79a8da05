/**
 * Gate 5, trust tiers. What hermit believes about a tool: on an `untrusted` server a tool is
 * read-only only when the manifest says so (`read_only_tools` on its entry); the server's own
 * `readOnlyHint` is shown, never believed (the MCP spec: annotations from untrusted servers are
 * untrusted). Every tool hermit does not believe read-only needs the user's approval before it
 * runs (before a lazy spawn too), is never retried after a lost connection, and is never presented
 * to hosts as read-only (hosts auto-approve read-only tools). The approval is an MCP elicitation
 * asking a yes/no question; only an explicit "accept" with the box ticked counts. Pure: the
 * belief, the decision, the question and the reading of the answer.
 */
import type { ElicitRequest, ElicitResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Trust } from "../manifest/types.ts";
import { argumentLines, escapeUnseen, MAX_DEPTH, MAX_LINES } from "./approval_text.ts";

/** One upstream tool as its server describes it and as the manifest speaks of it. */
export interface ReadOnlyEvidence {
  trust: Trust;
  /** The manifest declares it read-only (its raw name matches the entry's `read_only_tools`). */
  declared: boolean;
  /** The server's own `annotations.readOnlyHint`: any value, only `true` counts, only when trusted. */
  hint: unknown;
}

/**
 * The one rule: read-only when the manifest declares it, or when a fully trusted server says so.
 * The catalog, the upstream's at-most-once retry and the relay (through the `readOnlyHint` hosts
 * are shown) all follow this value.
 */
export function believedReadOnly(e: ReadOnlyEvidence): boolean {
  return e.declared || (e.trust === "full" && e.hint === true);
}

/** The trust table, frozen by a literal pin test: `readOnly` is the believed flag. */
export function needsApproval(trust: Trust, readOnly: unknown): boolean {
  return trust === "untrusted" && readOnly !== true;
}

/**
 * A tool as hosts see it: `annotations.readOnlyHint` says what hermit believes, so a server's
 * unbelieved claim never reaches a host (or a relay deciding what to retry) as read-only.
 * Annotations are left as they were when they agree.
 */
export function presentTool(tool: Tool, readOnly: boolean): Tool {
  const claimed = tool.annotations?.readOnlyHint === true;
  if (claimed === readOnly) return tool;
  return { ...tool, annotations: { ...tool.annotations, readOnlyHint: readOnly } };
}

/** Anything but `full` is untrusted: unknown values fail closed. */
export function foldTrust(value: unknown): Trust {
  return value === "full" || value === undefined ? "full" : "untrusted";
}

/** The one field of hermit's approval question: no server's elicitation may have one named so. */
export const APPROVAL_FIELD = "approve";

export interface ApprovalSubject {
  server: string;
  tool: string;
  args: Record<string, unknown>;
}

/**
 * The question: every value of the arguments by its path with a shortened view of it
 * (approval_text.ts), and nothing a reader cannot see raw (a `U+202E` in a file name is shown as
 * `<U+202E>`); undefined when the arguments cannot be shown whole (then nothing is asked).
 */
export function approvalRequest(s: ApprovalSubject): ElicitRequest["params"] | undefined {
  const [server, tool] = [escapeUnseen(s.server), escapeUnseen(s.tool)];
  const lines = argumentLines(s.args);
  if (!lines) return undefined;
  return {
    message:
      `The untrusted MCP server '${server}' wants to run the tool '${tool}', which may modify external state.\n` +
      `Arguments (${Object.keys(s.args).length}):\n${lines.join("\n")}\nAllow this call?`,
    requestedSchema: {
      type: "object",
      properties: {
        [APPROVAL_FIELD]: {
          type: "boolean",
          title: `Run ${tool} on ${server}`,
          description: "Tick to allow this one call",
        },
      },
      required: [APPROVAL_FIELD],
    },
  };
}

export type ApprovalOutcome = "approved" | "declined" | "cancelled" | "unavailable" | "failed" | "unshowable";

/** Only `accept` with `approve: true` approves; every other answer refuses. */
export function readApproval(result: ElicitResult | undefined): ApprovalOutcome {
  if (!result) return "failed";
  if (result.action === "accept") return result.content?.[APPROVAL_FIELD] === true ? "approved" : "declined";
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
    unshowable:
      `its arguments cannot be shown whole in an approval question (more than ${MAX_LINES} values, or nested deeper than ${MAX_DEPTH})`,
  }[outcome];
  return `refused: ${s.tool} on the untrusted server '${s.server}' needs the user's approval and ${why}; ` +
    "it was NOT run. Do not retry without explicit user direction.";
}
