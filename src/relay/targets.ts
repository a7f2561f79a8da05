/**
 * Where a relay attaches: the local service of a standalone adapter (found through
 * `DIR/.serve/endpoint`, refused when that directory or file is not to be trusted, launched under
 * the lock when `serve.host_launch` allows, exit 5 with the seed's one line when it does not), or
 * a service at a given URL (its Host and token checked once at start-up; a 401 or 403 ends the
 * relay with one line naming the cause and the fix). The launcher, the lock and the schema cache
 * (and the warm answers, with the catalog and gates they use) are loaded only when a relay needs them.
 */
import process from "node:process";
import { Exit, HermitError } from "../errors.ts";
import type { Manifest } from "../manifest/types.ts";
import type { CatalogSources } from "../mcp/catalog.ts";
import { jitlessImage } from "../platform/no_jit.ts";
import { parseServeUrl, probeAccess, type Refusal, refusalMessage } from "../service/access.ts";
import { type Endpoint, fetchFor, findService } from "../service/endpoint.ts";
import { noServiceMessage } from "../service/messages.ts";
import { checkLaunchable } from "../service/serve_dir.ts";
import type { ServiceAddress } from "./link.ts";
import type { RelayTarget } from "./relay.ts";
import { runRelay } from "./run.ts";

const addressOf = (ep: Endpoint): ServiceAddress => ({ url: ep.url, token: ep.token });

/** Does the service at `url` answer `/health`? */
async function answersHealth(url: string, timeoutMs = 2000): Promise<boolean> {
  try {
    const health = new URL("/health", url).href;
    const res = await fetchFor(health)(health, { method: "GET", signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel().catch(() => {});
    return res.ok;
  } catch {
    return false;
  }
}

export async function relayToLocal(m: Manifest, warmStart = true): Promise<number> {
  const target: RelayTarget = {
    locate: async () => {
      const found = await findService(m.dir);
      if (found || !m.serve.hostLaunch) return found && addressOf(found);
      if (jitlessImage()) {
        // the lock needs the JIT: a short-lived hermit with one launches (`launcher.ts`)
        await (await import("./launcher.ts")).launchInChild(m);
        const ep = await findService(m.dir);
        return ep && addressOf(ep);
      }
      const { findOrLaunch } = await import("../service/launch.ts");
      const ep = await findOrLaunch(m, true);
      return ep && addressOf(ep);
    },
    unavailable: noServiceMessage(m),
    // no `refused`: a local service's token is in its endpoint file, found again on reconnect
  };
  const running = await findService(m.dir);
  if (running) return runRelay(target, addressOf(running));
  if (!m.serve.hostLaunch) throw new HermitError(target.unavailable, Exit.noService);
  checkLaunchable(m.dir); // refused now, with one line, rather than on every launch attempt
  // no service yet: answer the host at once from the manifest and the cache while one starts
  if (!warmStart) return runRelay(target, undefined);
  const { defaultSchemaCache } = await import("../mcp/schema_cache.ts");
  const { warmAnswers } = await import("./warm.ts");
  const cache = defaultSchemaCache(m.dir);
  return runRelay(
    target,
    undefined,
    warmAnswers(m, (u) => cache.get(u), process.env, await lockWithholds(m)),
  );
}

/**
 * What hermit.lock withholds, for the warm answers (the service's catalog applies the same verdict):
 * nothing without a lock; the lock's parser is loaded only when the adapter has one.
 */
async function lockWithholds(m: Manifest): Promise<CatalogSources["withhold"]> {
  const { existsSync } = await import("node:fs");
  const { LOCK_FILE } = await import("../lock/types.ts");
  if (!existsSync(`${m.dir}/${LOCK_FILE}`)) return undefined;
  const [{ readLockState }, { judgeTool }, { shownDir }] = await Promise.all([
    import("../lock/file.ts"),
    import("../lock/verdict.ts"),
    import("../service/messages.ts"),
  ]);
  const state = readLockState(m.dir);
  return (server, t) => judgeTool(state, server, t, `hermit lock ${shownDir(m)}`) !== undefined;
}

export async function relayTo(m: Manifest, url: string, token: string | undefined): Promise<number> {
  const parsed = parseServeUrl(url, token === undefined ? undefined : "this relay");
  const address = { url: parsed.href, token };
  const target: RelayTarget = {
    locate: async () => (await answersHealth(parsed.href, 3000)) ? address : undefined,
    unavailable: `the ${m.name} service at ${parsed.origin} does not answer`,
    refused: (r: Refusal) => refusalMessage(m.name, parsed, r, token !== undefined),
  };
  const first = await target.locate();
  if (!first) throw new HermitError(target.unavailable, Exit.noService);
  const refusal = await probeAccess(parsed, token);
  if (refusal) throw new HermitError(target.refused!(refusal), Exit.usage);
  return runRelay(target, first);
}
