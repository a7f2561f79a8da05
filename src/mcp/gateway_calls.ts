/**
 * A tool call through the gate stack, for `Gateway.callTool` (the one entry every path uses): a
 * tool hermit.lock withholds is refused (gate 9); a command tool runs within
 * `serve.max_tool_processes`; an upstream's tool passes the trust gate (5) before anything touches
 * the upstream (a lazy spawn included), is judged again once connected, has its own requests
 * attributed while it runs (`gateway_requests.ts`), and its progress and result sanitized (4).
 */
import { mcpMessageOf } from "../errors.ts";
import { sanitizeErrorMessage, sanitizeResult, sanitizeValue } from "../gates/sanitize.ts";
import { needsApproval } from "../gates/trust.ts";
import type { Manifest } from "../manifest/types.ts";
import { CommandRefused, type CommandToolContext, runCommandTool } from "./command_tool.ts";
import type { Catalog } from "./gateway_catalog.ts";
import { answered, type CallOutcome, failedOutcome, refusedOutcome, UnknownTool } from "./gateway_outcome.ts";
import { askApproval, type CallContext, type ServerRequests } from "./gateway_requests.ts";
import type { ToolSlots } from "./tool_slots.ts";
import type { UpstreamConnection } from "./upstream.ts";
import { CallRefused } from "./upstream_calls.ts";

export interface CallPath {
  manifest: Manifest;
  catalog: Catalog;
  upstreams: ReadonlyMap<string, UpstreamConnection>;
  requests: ServerRequests;
  toolSlots: ToolSlots;
  commandContext: () => CommandToolContext;
}

/** Call the exported tool `name`: its outcome (answered, refused or failed), never a stray error. */
export async function callThroughGates(
  p: CallPath,
  name: string,
  args: Record<string, unknown>,
  ctx: CallContext,
): Promise<CallOutcome> {
  const entry = p.catalog.find(name);
  const withheld = entry ? undefined : p.catalog.withheld(name);
  if (withheld) return refusedOutcome(`refused: ${withheld.line}`);
  if (!entry) throw new UnknownTool(name, p.manifest.exports.tools.includes(name));
  const { source } = entry;
  if (source.kind === "command") {
    try {
      return answered(sanitizeResult(
        await p.toolSlots.run(name, () => runCommandTool(source.tool, args, p.commandContext(), ctx.signal)),
      ));
    } catch (err) {
      if (!(err instanceof CommandRefused)) throw err;
      return refusedOutcome(err.message);
    }
  }
  const upstream = p.upstreams.get(source.server)!;
  // the trust gate comes before anything touches the upstream, a lazy spawn included
  if (needsApproval(entry.trust, entry.readOnly)) {
    const refusal = await askApproval(upstream.config, name, args, ctx);
    if (refusal) return refusedOutcome(refusal);
  }
  const release = p.requests.enter(source.server, ctx);
  const onprogress = ctx.onprogress;
  try {
    const result = await upstream.callTool(source.raw, args, {
      signal: ctx.signal,
      // progress is the upstream's text on its way to the host too (gate 4)
      onprogress: onprogress && ((pr) => onprogress(sanitizeValue(pr))),
      readOnly: entry.readOnly,
      // once connected, the listing may be new (a lazy start, a reconnect): judged again
      admit: () => {
        const refusal = p.catalog.recheck(name, entry);
        if (refusal) throw new CallRefused(refusal);
      },
    });
    return answered(sanitizeResult(result));
  } catch (err) {
    if (err instanceof CallRefused) return refusedOutcome(err.message);
    return failedOutcome(sanitizeErrorMessage(mcpMessageOf(err)));
  } finally {
    release();
  }
}
