/**
 * Running a command tool: its argv in its own process group (cwd = the adapter directory, the
 * filtered environment), the call's arguments as JSON on stdin, stdout as the result (a JSON
 * object with `content`/`structuredContent` passes through; anything else is one text block), a
 * non-zero exit as `isError` with the tail of stderr. Past its timeout, or when the call is
 * cancelled, the whole group is stopped; so is whatever the tool left running in its group when
 * it exits (a daemon meant to outlive the call starts its own session).
 */
import { statSync } from "node:fs";
import path from "node:path";
import { type CallToolResult, CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { childEnv } from "../gates/env.ts";
import { screenCommandTool } from "../gates/screen_manifest.ts";
import { interpolate, type InterpolationContext } from "../manifest/interpolate.ts";
import type { CommandTool } from "../manifest/types.ts";
import { which } from "../platform/which.ts";
import { spawnInGroup } from "../process/group.ts";
import { checkArguments } from "./arguments.ts";
import { entryOf, type SandboxHost, SandboxRefused } from "../sandbox/host.ts";

export const MAX_STDOUT_BYTES = 4 * 1024 * 1024;
const STDERR_TAIL_BYTES = 4000;

export interface CommandToolContext {
  adapterDir: string;
  interpolation: InterpolationContext;
  parentEnv: Readonly<Record<string, string | undefined>>;
  platform: NodeJS.Platform;
  /** Confines the tool (absent: it runs unconfined). */
  sandbox?: SandboxHost;
}

export { commandToolDefinition } from "./catalog.ts";

/** Undefined when `args` fits the tool's input schema, else why not, in plain words. */
export function validateArguments(t: CommandTool, args: unknown): string | undefined {
  const r = checkArguments(t.name, t.inputSchema as object, args);
  if (r.kind === "unusable-schema") return `tools.${t.name}.input is ${r.why}`;
  return r.kind === "invalid" ? r.why : undefined;
}

/** Screening refused the tool after interpolation, right before the spawn. */
export class CommandRefused extends Error {
  override name = "CommandRefused";
}

const errorResult = (text: string): CallToolResult => ({ isError: true, content: [{ type: "text", text }] });

export async function runCommandTool(
  t: CommandTool,
  args: Record<string, unknown>,
  ctx: CommandToolContext,
  signal?: AbortSignal,
): Promise<CallToolResult> {
  const invalid = validateArguments(t, args);
  if (invalid) return errorResult(`invalid arguments for ${t.name}: ${invalid}`);

  const { value } = interpolate({ run: t.run, env: t.env, cwd: t.cwd }, ctx.interpolation);
  const verdict = screenCommandTool({ run: value.run, env: value.env, cwd: value.cwd });
  if (verdict.refused) {
    throw new CommandRefused(`refused: tools.${t.name}: ${verdict.reason}; it was NOT run`);
  }
  const cwd = path.resolve(ctx.adapterDir, value.cwd ?? ".");
  const env = childEnv(ctx.parentEnv, value.env, ctx.platform);
  env.HERMIT_ADAPTER_DIR = ctx.adapterDir;
  env.HERMIT_WORKSPACE = ctx.interpolation.workspaceFolder;
  env.HERMIT_TOOL = t.name;
  const [program, ...rest] = value.run;
  const resolved = which(program, { cwd, path: env.PATH, platform: ctx.platform });
  if (!resolved) return errorResult(`${t.name}: ${notRunnable(program, cwd, ctx.platform)}`);

  let launched;
  try {
    launched = ctx.sandbox
      ? await ctx.sandbox.launch(entryOf(t, "tool"), { command: resolved, args: rest, env, cwd })
      : { group: spawnInGroup(resolved, rest, { cwd, env }), hint: () => "" };
  } catch (err) {
    if (err instanceof SandboxRefused) throw new CommandRefused(err.message);
    return errorResult(`${t.name} could not start: ${(err as Error).message}`);
  }
  const { group } = launched;
  const child = group.child;
  const out: Buffer[] = [];
  let outBytes = 0;
  let truncated = false;
  let errTail = "";
  child.stdout!.on("data", (b: Buffer) => {
    if (outBytes >= MAX_STDOUT_BYTES) return void (truncated = true);
    out.push(b);
    outBytes += b.length;
  });
  child.stderr!.setEncoding("utf8").on("data", (s: string) => {
    errTail = (errTail + s).slice(-STDERR_TAIL_BYTES);
  });
  child.stdin!.on("error", () => {/* the tool did not read its input */});
  child.stdin!.end(JSON.stringify(args ?? {}));

  let ended: "timeout" | "cancelled" | undefined;
  const timer = setTimeout(() => {
    ended = "timeout";
    void group.stop();
  }, t.timeoutSeconds * 1000);
  const onAbort = () => {
    ended ??= "cancelled";
    void group.stop({ graceMs: 1000 });
  };
  signal?.addEventListener("abort", onAbort, { once: true });
  if (signal?.aborted) onAbort();

  const closed = new Promise<void>((r) => child.once("close", () => r()));
  const status = await group.exited;
  await Promise.race([closed, new Promise((r) => setTimeout(r, 500))]);
  clearTimeout(timer);
  signal?.removeEventListener("abort", onAbort);
  // The leader is gone; whatever it left running in its group goes too (cheap when nothing is).
  await group.stop({ graceMs: 500 });

  if (ended === "timeout") {
    return errorResult(`${t.name} timed out after ${t.timeoutSeconds} s; its processes were stopped`);
  }
  if (ended === "cancelled") return errorResult(`${t.name} was cancelled; its processes were stopped`);
  const stdout = Buffer.concat(out).toString("utf8") +
    (truncated ? `\n[output truncated at ${MAX_STDOUT_BYTES} bytes]` : "");
  if (status.code !== 0) {
    const detail = errTail.trim() || stdout.trim().slice(-STDERR_TAIL_BYTES);
    const hint = launched.hint(detail.split("\n").slice(-5));
    const sandboxed =
      /EACCES|EPERM|EROFS|Permission denied|Operation not permitted|Read-only file system|EAI_AGAIN|ENOTFOUND|ENETUNREACH|Network is unreachable|Could not resolve/i
        .test(detail);
    return errorResult(
      `${t.name} failed: ${status.reason}${detail ? "\n" + detail : ""}${
        hint && sandboxed ? `\n(${hint})` : ""
      }`,
    );
  }
  return resultFromStdout(stdout, t);
}

/** Why `which` found no `program`: a path that is a file but not executable says so, with the fix. */
function notRunnable(program: string, cwd: string, platform: NodeJS.Platform): string {
  // Windows has no executable bit: there a file that exists is run (or refused) by its extension
  if (platform !== "win32" && program.includes("/")) {
    try {
      if (statSync(path.resolve(cwd, program)).isFile()) {
        const arg = /^[\w@%+=:,./-]+$/.test(program) ? program : `'${program.replace(/'/g, `'\\''`)}'`;
        return `${program} is not executable: chmod +x ${arg}`;
      }
    } catch { /* missing: not found */ }
  }
  return `command not found: ${program}`;
}

/** A JSON object with `content`/`structuredContent` is a result; anything else is text. */
export function resultFromStdout(stdout: string, t: Pick<CommandTool, "outputSchema">): CallToolResult {
  const trimmed = stdout.trim();
  if (trimmed.startsWith("{")) {
    let obj: unknown;
    try {
      obj = JSON.parse(trimmed);
    } catch {
      obj = undefined;
    }
    if (obj && typeof obj === "object" && !Array.isArray(obj)) {
      const o = obj as Record<string, unknown>;
      if ("content" in o || "structuredContent" in o) {
        const candidate = {
          ...o,
          content: o.content ?? [{ type: "text", text: JSON.stringify(o.structuredContent) }],
        };
        const parsed = CallToolResultSchema.safeParse(candidate);
        if (parsed.success) return parsed.data;
      } else if (t.outputSchema) {
        return { content: [{ type: "text", text: trimmed }], structuredContent: o };
      }
    }
  }
  return { content: [{ type: "text", text: stdout.replace(/\r?\n$/, "") }] };
}
