/**
 * `hermit serve DIR` for a session adapter: one MCP server over stdio for one host session.
 * Upstreams are started first (the host's `initialize` waits in the pipe, bounded by
 * HERMIT_STARTUP_WAIT seconds, default 25), so the first `tools/list` is complete. The session
 * ends when the host closes stdin (after answering what it already asked, up to DRAIN_MS, or until
 * a signal cuts that short), the host process disappears, or a signal arrives; then every child
 * group is stopped and the watchdog is released.
 */
import process from "node:process";
import { log } from "../log.ts";
import { displayPath } from "../manifest/paths.ts";
import type { Manifest } from "../manifest/types.ts";
import { releaseWhenIdle } from "../platform/idle_release.ts";
import { shellQuote } from "../platform/shell_quote.ts";
import { stopAllGroups } from "../process/group.ts";
import { DRAIN_MS, type HostEnd, hostEnd } from "../process/host_end.ts";
import { disableWatchdog, enableWatchdog } from "../process/supervisor.ts";
import { Gateway } from "./gateway.ts";
import { trackInFlight } from "./inflight.ts";
import { createSessionServer } from "./server.ts";
import { HostStdioTransport } from "./stdio_host.ts";

export function startupWaitMs(env: Readonly<Record<string, string | undefined>> = process.env): number {
  const s = Number(env.HERMIT_STARTUP_WAIT ?? 25);
  return Number.isFinite(s) && s >= 0 ? s * 1000 : 25_000;
}

/** Why a stdio session ended; `text` for the log. */
export type SessionEnd =
  | { cause: "stdin-closed"; text: string }
  | { cause: "transport-closed"; text: string }
  | HostEnd;

/** Resolves with the reason the session ended: stdin EOF, the transport closing, or `host` (a signal, the host's death). */
export function sessionEnd(transport: { onclose?: () => void }, host: Promise<HostEnd>): Promise<SessionEnd> {
  return new Promise<SessionEnd>((resolve) => {
    const eof = () => resolve({ cause: "stdin-closed", text: "the host closed stdin" });
    process.stdin.once("end", eof);
    process.stdin.once("close", eof);
    transport.onclose = () => resolve({ cause: "transport-closed", text: "the transport closed" });
    void host.then(resolve);
  });
}

/** For a person who typed `hermit serve` at a terminal, where it waits for MCP in silence. */
function terminalHint(m: Manifest): string {
  const dir = shellQuote(m.dir === process.cwd() ? "." : displayPath(m.dir));
  return `serving ${m.name} over stdio: this is what a host runs, speaking MCP (JSON-RPC lines) on stdin/stdout; ` +
    `to add it to a host: hermit deploy ${dir} --host claude (or another); to try a tool: hermit call ${dir} TOOL; Ctrl-D ends`;
}

export async function serveStdio(manifest: Manifest): Promise<number> {
  enableWatchdog();
  const gateway = new Gateway(manifest);
  const t0 = performance.now();
  await gateway.start(startupWaitMs());
  gateway.logSelfCheck();
  const session = createSessionServer(gateway);
  const transport = new HostStdioTransport();
  const host = hostEnd({ keepAlive: true });
  const ended = sessionEnd(transport, host.ended);
  await session.connect(transport);
  const idle = releaseWhenIdle(process.env);
  const inFlight = trackInFlight(transport, idle?.touch);
  if (process.stdin.isTTY) log.info(terminalHint(manifest));
  log.debug(
    `serving ${manifest.name}: ${gateway.listTools().length} tools ready in ${
      Math.round(performance.now() - t0)
    } ms`,
  );
  const end = await ended;
  log.debug(`session ends: ${end.text}`);
  idle?.stop();
  // Answer what the host already asked (a piped client may close stdin right after sending),
  // unless the host then says stop: the spec's shutdown is close stdin, wait, SIGTERM, SIGKILL
  if (end.cause === "stdin-closed") {
    const cut = await Promise.race([inFlight.idle(DRAIN_MS).then(() => undefined), host.ended]);
    if (cut) log.debug(`${cut.text}: the rest of the drain is cut short`);
  }
  session.detach();
  await Promise.race([session.server.close().catch(() => {}), new Promise((r) => setTimeout(r, 1000))]);
  await gateway.stop();
  await stopAllGroups();
  await disableWatchdog();
  host.stop();
  return 0;
}
