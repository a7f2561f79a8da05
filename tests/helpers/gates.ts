/**
 * For the gate-stack e2e tests: an adapter in front of the hostile fixture server
 * (tests/fixtures/servers/hostile.mjs) and checks for hidden characters. The standalone service
 * they use as an entry path (startService, connectHttp) lives in service.ts, re-exported here.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fixtures } from "./hermit.ts";

export { connectHttp, type Service, startService } from "./service.ts";

const HOSTILE = path.join(fixtures, "servers", "hostile.mjs");

/** The hostile server's tools, and a command tool that prints its environment. */
export const GATES_TOOLS = [
  "tagged",
  "leaky_error",
  "thrown_error",
  "huge",
  "write_note",
  "write_unannotated",
  "read_note",
  "liar",
  "poisoned",
  "ask_sampling",
  "ask_elicitation",
  "dump_env",
  "tagged_schema",
  "tagged_progress",
  "env_tool",
];

/**
 * The hostile server's tools that really only read: what a manifest lists in `read_only_tools`
 * for it (not `write_note`, `write_unannotated`, nor `liar`, which claims to read and writes).
 */
export const HOSTILE_READ_ONLY = [
  "tagged",
  "leaky_error",
  "thrown_error",
  "huge",
  "read_note",
  "poisoned",
  "ask_*",
  "dump_env",
  "tagged_schema",
  "tagged_progress",
];

/**
 * Write `DIR/hermit.yaml`: mcp_servers.hostile (node hostile.mjs, declared env HOSTILE_LOG and
 * UPSTREAM_DECLARED, the log's directory writable in its sandbox) with the given trust, read-only
 * tools and limits, and tools.env_tool.
 */
export function writeGatesAdapter(
  dir: string,
  opts: { trust?: string; readOnlyTools?: string[]; sampling?: string; elicitation?: string } = {},
): string {
  mkdirSync(dir, { recursive: true });
  const yaml = [
    "name: gates",
    "exports:",
    `  tools: [${GATES_TOOLS.join(", ")}]`,
    "tools:",
    "  env_tool:",
    "    description: Prints its environment",
    `    run: [node, -e, "process.stdout.write(JSON.stringify(process.env))"]`,
    '    env: { TOOL_DECLARED: "${env:DECLARED_SRC}" }',
    "    read_only: true",
    "mcp_servers:",
    "  hostile:",
    "    command: node",
    `    args: [${JSON.stringify(HOSTILE)}]`,
    '    env: { HOSTILE_LOG: "${HOSTILE_LOG}", UPSTREAM_DECLARED: "${env:DECLARED_SRC}" }',
    // its log's directory: the sandbox lets a server write only where it says
    '    sandbox: { write: ["${HOSTILE_LOG}/.."] }',
    ...(opts.trust ? [`    trust: ${opts.trust}`] : []),
    ...(opts.readOnlyTools
      ? [`    read_only_tools: [${opts.readOnlyTools.map((t) => JSON.stringify(t)).join(", ")}]`]
      : []),
    ...(opts.sampling ? [`    sampling: ${opts.sampling}`] : []),
    ...(opts.elicitation ? [`    elicitation: ${opts.elicitation}`] : []),
  ].join("\n") + "\n";
  writeFileSync(path.join(dir, "hermit.yaml"), yaml);
  return dir;
}

/** Code points U+E0000–U+E007F that are not part of an RGI flag (England, Scotland, Wales). */
export function strayTags(s: string): number {
  const rgi =
    /\u{1F3F4}\u{E0067}\u{E0062}(?:\u{E0065}\u{E006E}\u{E0067}|\u{E0073}\u{E0063}\u{E0074}|\u{E0077}\u{E006C}\u{E0073})\u{E007F}/gu;
  const withoutFlags = s.replace(rgi, "");
  return [...withoutFlags.matchAll(/[\u{E0000}-\u{E007F}]/gu)].length;
}
