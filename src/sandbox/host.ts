/**
 * The sandbox as the gateway uses it: one per gateway. It knows the machine (`facts.ts`), owns
 * each entry's private TMPDIR (`tmp_dirs.ts`) and egress proxy, resolves each entry's policy and
 * starts every confined child under it (`spawn.ts`: through hermit's own launcher on Linux, which
 * confines itself and execs the target and reports on fd 3 before the target runs; through
 * `sandbox-exec` on macOS; plainly elsewhere, with a warning). It says what is enforced for each
 * entry (`tools`, `check`): the forecast, then what the launcher reported. It warns once per
 * entry about what is not, refuses under `require`, and logs every `sandbox: off` at start.
 */
import { existsSync, realpathSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { log } from "../log.ts";
import type { InterpolationContext } from "../manifest/interpolate.ts";
import type { CommandTool, Manifest, Upstream } from "../manifest/types.ts";
import { homeDir, stateDir } from "../platform/paths.ts";
import { type ProcessGroup, spawnInGroup } from "../process/group.ts";
import {
  type Capabilities,
  type Enforcement,
  enforcement,
  failureHint,
  launchGaps,
  refusalLine,
  summary,
  warningLine,
} from "./enforcement.ts";
import { learnCapabilities, probeCapabilities } from "./facts.ts";
import { claimLayers } from "./layers.ts";
import { type Entry, type Policy, type PolicyContext, resolvePolicy } from "./policy.ts";
import { readSmallText, repositoryFacts } from "./workspace_files.ts";
import { EgressProxy } from "./proxy.ts";
import { recordServed } from "./served.ts";
import { confinedEnv, type SpawnRequest, startConfined } from "./spawn.ts";
import { TmpDirs } from "./tmp_dirs.ts";

/** The sandbox would not run an entry (`require`, or the launcher refused): exit 4 in CLI paths. */
export class SandboxRefused extends Error {}

/** What a confined start gives back. */
export interface Launched {
  group: ProcessGroup;
  /** The policy's key to open, worded for a failed start (`failureHint`). */
  hint(stderrTail: readonly string[]): string;
}

export interface SandboxHostOptions {
  env: Readonly<Record<string, string | undefined>>;
  platform: NodeJS.Platform;
  interpolation: InterpolationContext;
  /** Tests: what the machine offers, instead of probing it. */
  capabilities?: Capabilities;
  /** No log lines (`check` reports the same as findings). */
  quiet?: boolean;
  /** Files of hermit's own no entry may read (a service's `--token-file`; links resolved too). */
  hermitSecrets?: readonly string[];
}

/** Where `file` leads (itself when it cannot be resolved). */
function realPath(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return path.resolve(file);
  }
}

export function entryOf(x: Upstream | CommandTool, kind: "server" | "tool"): Entry {
  return kind === "server"
    ? { label: `mcp_servers.${x.name}`, kind, trust: (x as Upstream).trust, settings: x.sandbox }
    : { label: `tools.${x.name}`, kind, trust: "full", settings: x.sandbox };
}

export class SandboxHost {
  readonly caps: Capabilities;
  readonly #manifest: Manifest;
  readonly #opts: SandboxHostOptions;
  readonly #stateDir: string;
  readonly #home: string;
  #served: string[] | undefined;
  readonly #proxies = new Map<string, EgressProxy>();
  readonly #tmp: TmpDirs;
  readonly #said = new Set<string>();
  readonly #effective = new Map<string, Enforcement>();
  readonly #hermitSecrets: string[];

  constructor(manifest: Manifest, opts: SandboxHostOptions) {
    this.#manifest = manifest;
    this.#opts = opts;
    const caps = opts.capabilities ?? probeCapabilities(opts.platform, opts.env);
    this.caps = { ...caps, why: { ...caps.why } };
    this.#home = homeDir(opts.env);
    this.#stateDir = stateDir(opts.platform, opts.env, this.#home);
    this.#tmp = new TmpDirs(this.#stateDir);
    this.#hermitSecrets = [
      ...new Set((opts.hermitSecrets ?? []).flatMap((f) => [path.resolve(f), realPath(f)])),
    ];
    // an adapter whose service has run (it has a .serve/) is recorded even if it starts nothing
    if (!opts.quiet && existsSync(path.join(manifest.dir, ".serve"))) this.#servedDirs(true);
    if (opts.quiet) return;
    if (opts.env.HERMIT_SANDBOX && opts.env.HERMIT_SANDBOX !== "require") {
      log.warn(`HERMIT_SANDBOX=${opts.env.HERMIT_SANDBOX} is not understood; the only value is 'require'`);
    }
    for (const e of this.entries()) {
      if (e.settings.off) {
        log.warn(
          `${e.label}: sandbox: off: it runs unconfined, with your full access (remove 'sandbox: off' to confine it)`,
        );
      }
    }
  }

  /** Every entry hermit may start: stdio servers and command tools. */
  entries(): Entry[] {
    return [
      ...Object.values(this.#manifest.upstreams).filter((u) => u.kind === "stdio").map((u) =>
        entryOf(u, "server")
      ),
      ...Object.values(this.#manifest.tools).map((t) => entryOf(t, "tool")),
    ];
  }

  /** The policy of `entry` (with `tmpDir` as its TMPDIR, or where it would be). Pure over the host's facts. */
  policy(
    entry: Entry,
    tmpDir = path.join(this.#tmp.root, "<per start>"),
    childEnv?: Readonly<Record<string, string>>,
  ): Policy {
    const ctx: PolicyContext = {
      platform: this.#opts.platform,
      home: this.#home,
      env: this.#opts.env,
      interpolation: this.#opts.interpolation,
      adapterDir: this.#manifest.dir,
      manifestFile: this.#manifest.file,
      stateDir: this.#stateDir,
      tmpDir,
      servedAdapters: this.#servedDirs(),
      hermitSecrets: this.#hermitSecrets,
      uid: process.getuid?.(),
      requireAll: this.#opts.env.HERMIT_SANDBOX === "require",
      npmrc: this.#npmrc(childEnv),
      ...repositoryFacts(this.#opts.interpolation.workspaceFolder),
      childEnv,
    };
    return resolvePolicy(entry, ctx);
  }

  readonly #npmrcTexts = new Map<string, string | undefined>();
  /**
   * The npm config the child reads (its npm_config_userconfig, else its ~/.npmrc), read once per
   * file: it may move npm's cache. The child's environment decides, not hermit's (`npx deno …`
   * exports npm_config_userconfig to hermit; gate 2 keeps it from the child).
   */
  #npmrc(childEnv: Readonly<Record<string, string | undefined>> | undefined): string | undefined {
    const env = childEnv ?? this.#opts.env;
    const file = (childEnv ? env.npm_config_userconfig : undefined) ||
      path.join(env.HOME || this.#home, ".npmrc");
    if (!this.#npmrcTexts.has(file)) {
      this.#npmrcTexts.set(file, readSmallText(file));
    }
    return this.#npmrcTexts.get(file);
  }

  /** What is enforced for `entry`: what its last start reported, else the forecast. */
  enforcement(entry: Entry): Enforcement {
    return this.#effective.get(entry.label) ?? enforcement(this.policy(entry), this.caps);
  }

  describe(entry: Entry): { summary: string; missing: string[]; require: boolean } {
    const e = this.enforcement(entry);
    const p = this.policy(entry);
    return { summary: summary(e), missing: e.missing, require: p.require && !p.off };
  }

  /** Start `req` confined by `entry`'s policy. Throws `SandboxRefused` when it may not run. */
  async launch(
    entry: Entry,
    req: SpawnRequest,
    stdio: "pipe"[] = ["pipe", "pipe", "pipe"],
  ): Promise<Launched> {
    if (entry.settings.off) {
      const group = spawnInGroup(req.command, req.args, { env: req.env, cwd: req.cwd, stdio });
      return { group, hint: () => "" };
    }
    const platform = this.#opts.platform;
    const confining = platform === "linux" || platform === "darwin";
    const tmpDir = confining ? this.#newTmp(entry.label) : undefined;
    const policy = this.policy(entry, tmpDir ?? "/nonexistent", req.env);
    if (policy.unresolved.length) {
      this.#once(`unresolved:${entry.label}`, () =>
        log.warn(
          `${entry.label}: sandbox paths using \${${policy.unresolved.join("}, ${")}} are left out: not set`,
        ));
    }
    if (policy.workspaceSkipped) {
      this.#once("workspace", () =>
        log.warn(
          `the workspace is ${this.#opts.interpolation.workspaceFolder}, not a project: it is not made writable for servers and tools (set HERMIT_WORKSPACE, or declare sandbox.write)`,
        ));
    }
    const forecast = enforcement(policy, this.caps);
    const settle = (e: Enforcement) => {
      this.#effective.set(entry.label, e);
      if (e.missing.length) this.#once(`missing:${entry.label}`, () => log.warn(warningLine(entry.label, e)));
    };
    // off Linux nothing later can do better than the forecast
    if (platform !== "linux" && policy.require && forecast.missing.length) {
      this.#tmp.drop(tmpDir);
      throw new SandboxRefused(refusalLine(entry.label, forecast));
    }
    const proxyPort = policy.network.mode === "allow" ? await this.#proxy(entry.label, policy) : undefined;
    const env = confinedEnv(req.env, policy.network, tmpDir, proxyPort);
    const layers = platform === "linux"
      ? await claimLayers(this.#stateDir, this.#manifest.dir, entry.label, policy.caches)
      : { layers: [], release: () => {} };
    const how = {
      platform,
      seatbelt: this.caps.seatbelt,
      label: entry.label,
      policy,
      proxyPort,
      layers: layers.layers,
    };
    const { group, report } = await startConfined(how, { ...req, env }, stdio).catch((err) => {
      layers.release();
      throw err;
    });
    // a daemon it leaves behind with setsid is an escape the process layer follows (process/escapes.ts)
    if (tmpDir) void group.exited.then(() => this.#tmp.drop(tmpDir));
    void group.exited.then(() => layers.release());
    if (!report) settle(forecast);
    else {
      learnCapabilities(this.caps, report.caps);
      const actual = enforcement(policy, report.caps);
      const gaps = launchGaps(entry.label, report);
      if (report.refused) {
        await group.exited;
        const lost = gaps.filter((g) => g.refuses).map((g) => g.phrase);
        throw new SandboxRefused(
          refusalLine(entry.label, { ...actual, missing: [...actual.missing, ...lost] }),
        );
      }
      settle({ ...actual, missing: [...actual.missing, ...gaps.map((g) => g.phrase)] });
    }
    return {
      group,
      hint: (tail) => failureHint(policy, this.#effective.get(entry.label) ?? forecast, tail, req),
    };
  }

  /** Stop the proxies and remove what is left of the temporary directories. */
  async close(): Promise<void> {
    await Promise.all([...this.#proxies.values()].map((p) => p.close()));
    this.#proxies.clear();
    this.#tmp.dropAll();
  }

  #once(key: string, fn: () => void): void {
    if (this.#said.has(key)) return;
    this.#said.add(key);
    fn();
  }

  /**
   * The adapters whose `.serve/` is protected; this one is recorded when it first starts something
   * or has a `.serve/` already (a gateway that does neither writes nothing).
   */
  #servedDirs(record = false): string[] {
    if (record && !this.#served) {
      this.#served = recordServed(this.#stateDir, this.#manifest.dir);
      this.#tmp.sweep();
    }
    return this.#served ?? [this.#manifest.dir];
  }

  /** A private TMPDIR for one start of `label` (this adapter is recorded first). */
  #newTmp(label: string): string {
    this.#servedDirs(true);
    return this.#tmp.create(label);
  }

  async #proxy(label: string, policy: Policy): Promise<number> {
    let proxy = this.#proxies.get(label);
    if (!proxy) {
      const allow = policy.network.mode === "allow" ? policy.network.allow : [];
      proxy = new EgressProxy(
        allow,
        (d, why) => log.warn(`${label}: sandbox: blocked a connection to ${d} (${why})`),
      );
      this.#proxies.set(label, proxy);
      await proxy.listen();
    }
    return proxy.port;
  }
}
