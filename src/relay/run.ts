/**
 * A relay on this process's stdio: lines from the host in, lines to the host out, until the host
 * goes away (stdin closed, a signal, or its process gone: our parent, by ppid or by pid and start
 * time) or the service refuses the relay for good. Requests the host already sent are still
 * answered when it closes stdin (a script, a pipe), within the drain limit; then the service
 * session is ended.
 */
import { Exit } from "../errors.ts";
import { log } from "../log.ts";
import { type Clock, realClock } from "../platform/clock.ts";
import { gcPacer } from "../platform/gc.ts";
import { DRAIN_MS, hostEnd } from "../process/host_end.ts";
import { readHostLines, stdoutLines } from "./io.ts";
import { errorLine, idInHead, parseMessage, RpcCode } from "./jsonrpc.ts";
import type { ServiceAddress } from "./link.ts";
import { Relay, type RelayTarget } from "./relay.ts";
import type { WarmAnswers } from "./warm.ts";

/** The longest line a host may send (a longer one is answered with an error and skipped). */
export const MAX_LINE = 32 * 1024 * 1024;
/** Messages (both ways) between two young-generation collections (`gcPacer`). */
const GC_EVERY = 64;

export async function runRelay(
  target: RelayTarget,
  first: ServiceAddress | undefined,
  warm?: WarmAnswers,
  clock: Clock = realClock,
): Promise<number> {
  const out = stdoutLines();
  const tick = gcPacer(GC_EVERY);
  const write = (line: string) => (tick(), out.write(line));
  const relay = new Relay({ target, out: write, clock, warm });
  const stdinEnded = readHostLines({
    onLine: (line) => (tick(), relay.fromHost(parseMessage(line))),
    onOversize: (head) =>
      write(errorLine(
        idInHead(head),
        RpcCode.InvalidRequest,
        `Invalid Request: the message is over ${MAX_LINE / 1024 / 1024} MiB; it was not sent`,
      )),
  }, MAX_LINE);
  await relay.start(first);
  const host = hostEnd();
  const gone = host.ended.then((h): End => ({ kind: "host-gone", why: h.text }));
  const end = await Promise.race([
    stdinEnded.then((): End => ({ kind: "stdin", why: "the host closed stdin" })),
    gone,
    relay.refused.then((m): End => ({ kind: "refused", why: `refused: ${m}` })),
  ]);
  log.debug(`relay ends: ${end.why}`);
  // a host that closes stdin right after sending (a script, a pipe) still gets its answers, unless
  // it goes away altogether (a signal can end the stdin stream before its handler runs)
  if (end.kind === "stdin") await Promise.race([relay.idle(DRAIN_MS), gone]);
  await relay.close();
  await out.drain();
  host.stop();
  const refused = relay.refusalError();
  if (refused) throw refused;
  return Exit.ok;
}

/** Why a relay ends. */
type End = { kind: "stdin" | "host-gone" | "refused"; why: string };
