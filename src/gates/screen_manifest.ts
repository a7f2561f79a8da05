/**
 * Gate 1 over a whole manifest: which `mcp_servers` entries and command tools are refused, and
 * why. Used at load (serve, check, tools, call), by deploy/convert before writing, and (on the
 * interpolated values) right before every spawn. IOCs are searched in every value of an entry
 * (command, args, env, headers, url, cwd); the shell shapes in the argv.
 */
import type { CommandTool, Manifest, Upstream } from "../manifest/types.ts";
import { screen, type ScreenVerdict } from "./screen.ts";
import type { RefusalShape } from "./screen_shapes.ts";

export interface Refusal {
  /** `mcp_servers.<name>` or `tools.<name>`. */
  where: string;
  shape: RefusalShape;
  reason: string;
}

export function screenUpstream(
  u: Pick<Upstream, "command" | "args" | "env" | "url" | "headers"> & { cwd?: string },
): ScreenVerdict {
  return screen({
    command: u.command,
    args: u.args,
    values: [
      ...Object.values(u.env),
      ...Object.values(u.headers),
      ...(u.url ? [u.url] : []),
      ...(u.cwd ? [u.cwd] : []),
    ],
  });
}

export function screenCommandTool(t: Pick<CommandTool, "run" | "env"> & { cwd?: string }): ScreenVerdict {
  return screen({ args: t.run, values: [...Object.values(t.env), ...(t.cwd ? [t.cwd] : [])] });
}

export function screenManifest(m: Manifest): Refusal[] {
  const out: Refusal[] = [];
  for (const u of Object.values(m.upstreams)) {
    const v = screenUpstream(u);
    if (v.refused) out.push({ where: `mcp_servers.${u.name}`, shape: v.shape, reason: v.reason });
  }
  for (const t of Object.values(m.tools)) {
    const v = screenCommandTool(t);
    if (v.refused) out.push({ where: `tools.${t.name}`, shape: v.shape, reason: v.reason });
  }
  return out;
}

/** The one line a refusal is reported with: `refused: mcp_servers.<name>: <shape and why>`. */
export function refusalLine(r: Refusal): string {
  return `refused: ${r.where}: ${r.reason}`;
}
