/**
 * Where a relay attaches: the local service of a standalone adapter (found through
 * `DIR/.serve/endpoint`, launched under the lock when `serve.host_launch` allows, exit 5 with the
 * seed's one line when it does not), or a service at a given URL.
 */
import { Exit, HermitError } from "../errors.ts";
import type { Manifest } from "../manifest/types.ts";
import process from "node:process";
import { defaultSchemaCache } from "../mcp/schema_cache.ts";
import { findOrLaunch, findService, noServiceMessage } from "./launch.ts";
import { warmAnswers } from "./warm_answers.ts";
import { Relay, type RelayTarget } from "./relay.ts";

export async function relayToLocal(m: Manifest, dirShown: string, warmStart = true): Promise<number> {
  const target: RelayTarget = {
    locate: async () => {
      const ep = await findOrLaunch(m, m.serve.hostLaunch);
      return ep && { url: ep.url, token: ep.token };
    },
    unavailable: noServiceMessage(m, dirShown),
  };
  const running = await findService(m.dir);
  if (running) return new Relay(target).run({ url: running.url, token: running.token });
  if (!m.serve.hostLaunch) throw new HermitError(target.unavailable, Exit.noService);
  // no service yet: answer the host at once from the manifest and the cache while one starts
  return new Relay(target, warmStart ? warmAnswers(m, defaultSchemaCache(), process.env) : undefined).run(
    undefined,
  );
}

export async function relayTo(m: Manifest, url: string, token: string | undefined): Promise<number> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new HermitError(`--serve-url '${url}' is not a URL, e.g. http://10.0.0.5:8080/mcp`, Exit.usage);
  }
  const address = { url: parsed.href, token };
  const target: RelayTarget = {
    locate: async () => {
      try {
        const res = await fetch(new URL("/health", parsed), { signal: AbortSignal.timeout(3000) });
        return res.ok ? address : undefined;
      } catch {
        return undefined;
      }
    },
    unavailable: `the ${m.name} service at ${parsed.origin} does not answer`,
  };
  const first = await target.locate();
  if (!first) throw new HermitError(target.unavailable, Exit.noService);
  return new Relay(target).run(first);
}
