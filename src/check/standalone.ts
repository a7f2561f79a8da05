/**
 * The live health rule for a standalone adapter: checked through a relay, as a host reaches it.
 * When no service was running, the relay starts one; check stops it again afterwards (unless a
 * host attached to it meanwhile: then it is left running, and the report says so and how it
 * ends), so `hermit serve DIR --standalone` works right after. A service that was already running
 * is left alone. Upstreams that could not be started are read from the service's `/health`.
 */
import { displayPath } from "../manifest/load.ts";
import type { Manifest } from "../manifest/types.ts";
import { serviceStatus, stopService } from "../service/control.ts";
import { sleep } from "../process/wait.ts";
import { liveFindings, type LiveOptions } from "./live.ts";
import type { UpstreamFailure } from "./serve_log.ts";
import type { Finding } from "./static.ts";

/** How long check waits for its own relay's session to end before it counts the clients. */
const CLIENT_GONE_MS = 3000;

export async function standaloneFindings(m: Manifest, opts: LiveOptions): Promise<Finding[]> {
  const before = await serviceStatus(m.dir);
  const findings = await liveFindings(m, { ...opts, failures: () => upstreamFailures(m) });
  let after = await serviceStatus(m.dir);
  if (!after.running) return findings;
  if (before.running && before.pid === after.pid) {
    findings.push({
      level: "ok",
      area: "health",
      message: `live: checked through the service already running (pid ${after.pid}); left running`,
    });
    return findings;
  }
  // check's relay has gone; its session may take a moment to end at the service
  for (const t0 = Date.now(); (after.clients ?? 0) > 0 && Date.now() - t0 < CLIENT_GONE_MS;) {
    await sleep(100);
    after = await serviceStatus(m.dir);
    if (!after.running) return findings;
  }
  const dir = displayPath(m.dir);
  if ((after.clients ?? 0) > 0) {
    findings.push({
      level: "warning",
      area: "health",
      message:
        `live: the service check started (pid ${after.pid}) has ${after.clients} other client(s) now, so it is left running; it stops ${m.serve.idleShutdownSeconds} s after its last client leaves, or run 'hermit stop ${dir}'`,
    });
    return findings;
  }
  const stopped = await stopService(m.dir);
  findings.push(
    stopped.stopped
      ? {
        level: "ok",
        area: "health",
        message: `live: stopped the service check started (pid ${stopped.pid})`,
      }
      : {
        level: "warning",
        area: "health",
        message:
          `live: could not stop the service check started (pid ${after.pid}): ${stopped.why}; run 'hermit stop ${dir}'`,
      },
  );
  return findings;
}

/** The service's upstreams that are down, with why, from its `/health`. */
async function upstreamFailures(m: Manifest): Promise<UpstreamFailure[]> {
  const s = await serviceStatus(m.dir);
  return (s.upstreams ?? []).filter((u) => u.state !== "connected" && u.lastError).map((u) => ({
    server: u.name,
    reason: u.lastError!,
  }));
}
