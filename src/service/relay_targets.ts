/**
 * Where a relay attaches: the local service of a standalone adapter (found through
 * `DIR/.serve/endpoint`, launched under the lock when `serve.host_launch` allows, exit 5 with the
 * seed's one line when it does not), or a service at a given URL (its Host and token checked once
 * at start-up; a 401 or 403 ends the relay with one line naming the cause and the fix).
 */
import { Exit, HermitError } from "../errors.ts";
import type { Manifest } from "../manifest/types.ts";
import process from "node:process";
import { defaultSchemaCache } from "../mcp/schema_cache.ts";
import { parseServeUrl, probeAccess, type Refusal, refusalMessage } from "./access.ts";
import { findOrLaunch, findService, noServiceMessage } from "./launch.ts";
import { warmAnswers } from "./warm_answers.ts";
import { Relay, type RelayTarget } from "./relay.ts";

export async function relayToLocal(m: Manifest, warmStart = true): Promise<number> {
  const target: RelayTarget = {
    locate: async () => {
      const ep = await findOrLaunch(m, m.serve.hostLaunch);
      return ep && { url: ep.url, token: ep.token };
    },
    unavailable: noServiceMessage(m),
    // no `refused`: a local service's token is in its endpoint file, found again on reconnect
  };
  const running = await findService(m.dir);
  if (running) return new Relay(target).run({ url: running.url, token: running.token });
  if (!m.serve.hostLaunch) throw new HermitError(target.unavailable, Exit.noService);
  // no service yet: answer the host at once from the manifest and the cache while one starts
  return new Relay(target, warmStart ? warmAnswers(m, defaultSchemaCache(m.dir), process.env) : undefined)
    .run(
      undefined,
    );
}

export async function relayTo(m: Manifest, url: string, token: string | undefined): Promise<number> {
  const parsed = parseServeUrl(url);
  const address = { url: parsed.href, token };
  const target: RelayTarget = {
    locate: async () => {
      try {
        const res = await fetch(new URL("/health", parsed), { signal: AbortSignal.timeout(3000) });
        await res.body?.cancel().catch(() => {});
        return res.ok ? address : undefined;
      } catch {
        return undefined;
      }
    },
    unavailable: `the ${m.name} service at ${parsed.origin} does not answer`,
    refused: (r: Refusal) => refusalMessage(m.name, parsed, r, token !== undefined),
  };
  const first = await target.locate();
  if (!first) throw new HermitError(target.unavailable, Exit.noService);
  const refusal = await probeAccess(parsed, token);
  if (refusal) throw new HermitError(target.refused!(refusal), Exit.usage);
  return new Relay(target).run(first);
}
