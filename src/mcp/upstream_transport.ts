/**
 * From a manifest `mcp_servers` entry to a connected-ready SDK transport: interpolation, the
 * filtered environment (gate 2), command resolution against that environment's PATH, and the
 * transport kind (stdio in its own process group, Streamable HTTP, or legacy SSE), and a remote one
 * refused when it would send credentials in cleartext (`gates/cleartext.ts`). The SDK's HTTP
 * transports (`http_transport.ts`) are loaded with the first remote upstream, not before.
 */
import path from "node:path";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { FetchLike, Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { childEnv } from "../gates/env.ts";
import { cleartextRefusal } from "../gates/cleartext.ts";
import { screenUpstream } from "../gates/screen_manifest.ts";
import { interpolate, type InterpolationContext } from "../manifest/interpolate.ts";
import { MANIFEST_FILE } from "../manifest/paths.ts";
import type { Upstream } from "../manifest/types.ts";
import { pathDirs, relativePathDirs, which } from "../platform/which.ts";
import { pinArgs } from "../lock/packages.ts";
import type { LockedPackage } from "../lock/types.ts";
import { entryOf, type SandboxHost, SandboxRefused } from "../sandbox/host.ts";
import { GroupStdioTransport, type Launch } from "./stdio_transport.ts";

export interface TransportContext {
  adapterDir: string;
  /** The manifest, for messages (default: `hermit.yaml` in `adapterDir`). */
  manifestFile?: string;
  interpolation: InterpolationContext;
  /** hermit's own environment, the source of the inheritable keys. */
  parentEnv: Readonly<Record<string, string | undefined>>;
  platform: NodeJS.Platform;
  /** `auth: oauth` upstreams: the OAuth client provider, and the fetch its requests go through. */
  authProvider?: OAuthClientProvider;
  fetch?: FetchLike;
  /** The package version hermit.lock pins this entry to (rewritten into its arguments here). */
  pinned?: LockedPackage;
  /** Confines stdio servers (absent: they run unconfined, as in-process tests do). */
  sandbox?: SandboxHost;
}

export interface BuiltTransport {
  transport: Transport;
  /** For messages: the command line or URL, with no secrets. */
  describe: string;
  /** Variables referenced but unset (their `${…}` placeholders were passed on literally). */
  unresolved: string[];
  /** A failed start's message, with what the sandbox has to say about it. */
  explain?: (message: string, stderrTail: string[]) => string;
}

/**
 * One line for a command that is not there: its name and where it was looked for (each PATH
 * directory once, or the directory a relative path starts from).
 */
export function commandNotFound(
  command: string,
  pathVar: string | undefined,
  cwd: string,
  platform: NodeJS.Platform,
): string {
  if (/[\\/]/.test(command)) return `command not found: '${command}' (no such file, from ${cwd})`;
  const windows = platform === "win32";
  const dirs = [...new Set(pathDirs(pathVar ?? "", windows))];
  const relative = relativePathDirs(pathVar ?? "", windows);
  const skipped = relative.length
    ? `; relative entries are not searched (${relative.join(", ")}): name the command by its path`
    : "";
  return `command not found: '${command}' (looked in PATH: ${dirs.join(windows ? ";" : ":")}${skipped})`;
}

/** Screening (gate 1) refused the entry, after interpolation, right before the spawn. */
export class UpstreamRefused extends Error {
  override name = "UpstreamRefused";
}

export async function buildTransport(u: Upstream, ctx: TransportContext): Promise<BuiltTransport> {
  if (u.kind === "stdio") {
    const { value, unresolved } = interpolate(
      { command: u.command!, args: pinArgs(u.command, u.args, ctx.pinned), env: u.env, cwd: u.cwd },
      ctx.interpolation,
    );
    const verdict = screenUpstream({
      command: value.command,
      args: value.args,
      env: value.env,
      headers: {},
      cwd: value.cwd,
    });
    if (verdict.refused) throw new UpstreamRefused(`refused: mcp_servers.${u.name}: ${verdict.reason}`);
    const env = childEnv(ctx.parentEnv, value.env, ctx.platform);
    const cwd = path.resolve(ctx.adapterDir, value.cwd ?? ".");
    const resolved = which(value.command, { path: env.PATH, cwd, platform: ctx.platform });
    if (!resolved) throw new Error(commandNotFound(value.command, env.PATH, cwd, ctx.platform));
    const sandbox = ctx.sandbox;
    let hint: ((tail: string[]) => string) | undefined;
    const launch: Launch | undefined = sandbox && (async (spawn, stdio) => {
      try {
        const launched = await sandbox.launch(entryOf(u, "server"), spawn, stdio);
        hint = launched.hint;
        return launched.group;
      } catch (err) {
        throw err instanceof SandboxRefused ? new UpstreamRefused(err.message) : err;
      }
    });
    const transport = new GroupStdioTransport({ command: resolved, args: value.args, env, cwd }, launch);
    return {
      transport,
      describe: [value.command, ...value.args].join(" "),
      unresolved,
      // every line it left, not only the last few: the one naming the path may come earlier
      explain: (message) => hint ? `${message}; ${hint(transport.stderrTail)}` : message,
    };
  }
  const { value, unresolved } = interpolate({ url: u.url!, headers: u.headers }, ctx.interpolation);
  const verdict = screenUpstream({ url: value.url, headers: value.headers, args: [], env: {} });
  if (verdict.refused) throw new UpstreamRefused(`refused: mcp_servers.${u.name}: ${verdict.reason}`);
  const file = ctx.manifestFile ?? path.join(ctx.adapterDir, MANIFEST_FILE);
  const cleartext = cleartextRefusal(u, value.url, file);
  if (cleartext) throw new UpstreamRefused(cleartext);
  const url = new URL(value.url);
  const { httpTransport } = await import("./http_transport.ts");
  const transport = httpTransport(u.kind, url, {
    requestInit: { headers: value.headers },
    authProvider: ctx.authProvider,
    fetch: ctx.fetch,
  });
  return { transport, describe: `${url.origin}${url.pathname}`, unresolved };
}
