/**
 * How the gateway reaches things: the context a command tool runs in (adapter directory,
 * interpolation, the environment hermit filters from, platform), and the transport to each
 * upstream — spawned, dialed (with the stored OAuth login of an `auth: oauth` server), or, in
 * tests, handed over in process.
 */
import process from "node:process";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { contextFrom } from "../manifest/interpolate.ts";
import type { Manifest, Upstream } from "../manifest/types.ts";
import { SandboxHost } from "../sandbox/host.ts";
import type { CommandToolContext } from "./command_tool.ts";
import { createRuntimeAuth, type RuntimeAuth } from "./oauth/runtime_provider.ts";
import { buildTransport, type BuiltTransport, UpstreamRefused } from "./upstream_transport.ts";
import type { LockedPackage } from "../lock/types.ts";

export interface TransportOptions {
  env: Readonly<Record<string, string | undefined>>;
  cwd?: string;
  platform?: NodeJS.Platform;
  /** Tests: open upstream transports in process instead of spawning or dialing. */
  transportFactory?: (u: Upstream) => Transport;
  /** The package version hermit.lock pins an upstream to. */
  pin?: (server: string) => LockedPackage | undefined;
  /** Why hermit.lock lets an upstream not start now (it cannot be used, or holds another launch). */
  startRefusal?: (u: Upstream) => string | undefined;
  /** Files no child may read: a service's `--token-file`. */
  hermitSecrets?: readonly string[];
}

export class Transports {
  readonly #manifest: Manifest;
  readonly #opts: TransportOptions;
  readonly #oauth = new Map<string, RuntimeAuth>();
  /** Confines every child: stdio servers and command tools. */
  readonly sandbox: SandboxHost;

  constructor(manifest: Manifest, opts: TransportOptions) {
    this.#manifest = manifest;
    this.#opts = opts;
    this.sandbox = new SandboxHost(manifest, {
      env: opts.env,
      platform: opts.platform ?? process.platform,
      interpolation: contextFrom(opts.env, opts.cwd ?? process.cwd()),
      hermitSecrets: opts.hermitSecrets,
    });
  }

  commandContext(): CommandToolContext {
    return {
      adapterDir: this.#manifest.dir,
      interpolation: contextFrom(this.#opts.env, this.#opts.cwd ?? process.cwd()),
      parentEnv: this.#opts.env,
      platform: this.#opts.platform ?? process.platform,
      sandbox: this.sandbox,
    };
  }

  open(u: Upstream): BuiltTransport | Promise<BuiltTransport> {
    const refused = this.#opts.startRefusal?.(u);
    if (refused) throw new UpstreamRefused(refused);
    if (this.#opts.transportFactory) {
      return { transport: this.#opts.transportFactory(u), describe: "in process", unresolved: [] };
    }
    const ctx = this.commandContext();
    const auth = this.#oauthFor(u);
    return buildTransport(u, {
      adapterDir: ctx.adapterDir,
      manifestFile: this.#manifest.file,
      interpolation: ctx.interpolation,
      parentEnv: ctx.parentEnv,
      platform: ctx.platform,
      authProvider: auth?.provider,
      fetch: auth?.fetch,
      pinned: this.#opts.pin?.(u.name),
      sandbox: this.sandbox,
    });
  }

  /** Changes when an OAuth upstream's stored login does (`hermit login` in another process). */
  credentialsStamp(u: Upstream): string | undefined {
    return this.#opts.transportFactory ? undefined : this.#oauthFor(u)?.provider.store.stamp();
  }

  /** What connecting an OAuth upstream waits for now: a refresh of its login (another hermit's). */
  waitingFor(u: Upstream): string | undefined {
    return this.#oauth.get(u.name)?.provider.guard.waitingFor();
  }

  /** The stored login of an `auth: oauth` upstream, read by every non-interactive path. */
  #oauthFor(u: Upstream): RuntimeAuth | undefined {
    if (u.auth !== "oauth" || u.kind === "stdio") return undefined;
    let auth = this.#oauth.get(u.name);
    if (!auth) {
      const ctx = this.commandContext();
      auth = createRuntimeAuth(u, {
        platform: ctx.platform,
        env: this.#opts.env,
        adapter: this.#manifest.name,
        adapterDir: this.#manifest.dir,
        interpolation: ctx.interpolation,
      });
      this.#oauth.set(u.name, auth);
    }
    return auth;
  }
}
