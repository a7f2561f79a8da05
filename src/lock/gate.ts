/**
 * The lock as a running gateway holds it: the adapter's `hermit.lock` read at start and re-read
 * when the file changes (polled, so a long-lived service sees a `hermit lock` run elsewhere and
 * serves an accepted tool again without a restart), the verdict for each upstream tool, logged
 * once per withheld definition with what changed, and the package version to pin at spawn. A lock
 * that is there but cannot be used (a merge conflict, a hand-edited version) starts no upstream at
 * all (fail closed: what would run is what the lock was to hold down), nor does one that launches
 * something other than what the lock holds for it (`launch.ts`); once the lock allows it, the
 * gateway starts it.
 * `mode`: `enforce` (serve, the service, call, tools), `pin` (check's comparison: run the locked
 * versions, withhold nothing), `off` (`hermit lock` itself: run what the manifest says).
 */
import { log } from "../log.ts";
import { own } from "../platform/own.ts";
import { lockPath, lockStamp, readLockState } from "./file.ts";
import type { Upstream } from "../manifest/types.ts";
import { launchMismatch } from "./launch.ts";
import type { LockedPackage, LockState } from "./types.ts";
import { judgeTool, type LiveTool, type Withheld } from "./verdict.ts";

export type LockMode = "enforce" | "pin" | "off";

/** How often a running gateway looks at hermit.lock for changes. */
export const LOCK_POLL_MS = 2000;

export class LockGate {
  readonly #dir: string;
  readonly #mode: LockMode;
  readonly #acceptWith: string;
  readonly #onChange: () => void;
  readonly #logged = new Set<string>();
  readonly #refused = new Set<string>();
  #state: LockState = { kind: "none" };
  #stamp = "absent";
  #generation = 0;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    adapterDir: string,
    opts: { mode: LockMode; acceptWith: string; onChange: () => void },
  ) {
    this.#dir = adapterDir;
    this.#mode = opts.mode;
    this.#acceptWith = opts.acceptWith;
    this.#onChange = opts.onChange;
    if (this.#mode === "off") return;
    this.#read();
    if (this.#state.kind === "invalid") log.error(this.#unusable(this.#state.why));
  }

  /**
   * Why `u` may not start now (enforce and pin, with a lock: it cannot be used, or `u` launches
   * something other than what it holds for it), if so. Remembered, so the gateway can start it once the lock
   * allows it.
   */
  startRefusal(u: Upstream): string | undefined {
    // pin (check's comparison) runs the locked versions: never another launch either
    if (this.#mode === "off" || this.#state.kind === "none") return undefined;
    const why = this.#state.kind === "invalid"
      ? this.#unusable(this.#state.why)
      : launchMismatch(u, own(this.#state.lock.servers, u.name), this.#dir);
    if (why === undefined) return undefined;
    this.#refused.add(u.name);
    const accept = this.#state.kind === "invalid"
      ? ""
      : `; review it and accept it with '${this.#acceptWith}'`;
    return `refused: mcp_servers.${u.name} not started: ${why}${accept}`;
  }

  /** Servers this lock kept from starting, which it would let start now. */
  nowAllowed(upstreams: Iterable<Upstream>): Upstream[] {
    return [...upstreams].filter((u) => this.#refused.has(u.name) && this.#allowed(u));
  }

  #allowed(u: Upstream): boolean {
    if (this.#state.kind === "none") return true;
    if (this.#state.kind === "invalid") return false;
    return launchMismatch(u, own(this.#state.lock.servers, u.name), this.#dir) === undefined;
  }

  #unusable(why: string): string {
    return `${
      lockPath(this.#dir)
    } cannot be used (${why}), so no upstream server starts; fix it (resolve a merge conflict) or review and rewrite it with '${this.#acceptWith}'`;
  }

  get state(): LockState {
    return this.#state;
  }

  /** Changes whenever the lock is re-read with a different content (the catalog rebuilds then). */
  get generation(): number {
    return this.#generation;
  }

  /**
   * Start noticing changes to the file (long-lived gateways). Real time, not the gateway's clock:
   * this polls the real file system, and a test's fake clock jumping a year must not poll it
   * fifteen million times.
   */
  watch(): void {
    if (this.#mode !== "enforce" || this.#timer !== undefined) return;
    this.#timer = setInterval(() => {
      if (lockStamp(this.#dir) === this.#stamp) return;
      this.#read();
      if (this.#state.kind === "invalid") log.error(this.#unusable(this.#state.why));
      else log.info(`hermit.lock changed; tools are checked against it again`);
      this.#onChange();
    }, LOCK_POLL_MS);
    (this.#timer as { unref?: () => void }).unref?.();
  }

  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Undefined: serve it. Otherwise it is withheld, and the first time a definition is, it is logged. */
  judge(server: string, t: LiveTool): Withheld | undefined {
    if (this.#mode !== "enforce") return undefined;
    const w = judgeTool(this.#state, server, t, this.#acceptWith);
    if (w) {
      const key = `${this.#generation}\0${server}\0${t.raw}\0${JSON.stringify(t.tool)}`;
      if (!this.#logged.has(key)) {
        this.#logged.add(key);
        log.warn(`lock: ${w.detail}`);
      }
    }
    return w;
  }

  /** The package version to start for `server`, when the lock records one. */
  pinFor(server: string): LockedPackage | undefined {
    if (this.#mode === "off" || this.#state.kind !== "ok") return undefined;
    return own(this.#state.lock.servers, server)?.package;
  }

  #read(): void {
    this.#stamp = lockStamp(this.#dir);
    this.#state = readLockState(this.#dir);
    this.#generation++;
  }
}
