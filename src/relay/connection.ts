/**
 * A relay's hold on its service: one session (a `Link`) at a time. It attaches (replaying the
 * host's `initialize` when the host already has its answer), watches the session (a broken event
 * stream asks the session itself whether it is still there), and when the session is lost lets
 * what was in transit settle, ends it with a DELETE, and finds or relaunches a service again,
 * pacing the attempts over the whole outage. A refusal for good (a wrong token) ends it. What the
 * messages mean is the relay's (`relay.ts`): this tells it what came, when a session is attached,
 * when one is up, and when requests have waited too long in an outage. Time comes from an injected
 * clock.
 */
import type { JSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";
import { HermitError } from "../errors.ts";
import { log } from "../log.ts";
import type { Clock } from "../platform/clock.ts";
import type { Refusal } from "../service/access.ts";
import type { Message } from "./jsonrpc.ts";
import { type Connect, type Link, openLink, ServiceRefused } from "./attach.ts";
import type { ServiceAddress } from "./link.ts";
import type { PostResult } from "./link_outcomes.ts";
import { backoffMs, type Outage, WAIT_MS } from "./policy.ts";

export interface RelayTarget {
  /** Find (or launch) the service; undefined when none runs and none may be started. */
  locate(): Promise<ServiceAddress | undefined>;
  /** Said when no service can be found while the host waits. */
  unavailable: string;
  /**
   * What to say when the service answers 401 or 403: the relay then ends with that error. Without
   * it the relay finds the service again (a relaunched local service has a new token).
   */
  refused?(r: Refusal): string;
}

/** What the connection tells the relay that owns it. */
export interface ConnectionOwner {
  /** The host's `initialize` to replay on a new session: the host has its answer already. */
  replay(): JSONRPCRequest | undefined;
  /** A message from `link`'s session. */
  fromService(m: Message, link: Link): void;
  /** A session is attached; `replayed`: it is initialized already. */
  attached(replayed: boolean): void;
  /** The session is lost: what the host sends waits for the next one. */
  detached(): void;
  /** The connection is ready (attached, any outage over): settle what was in flight, send what waited. */
  up(): void;
  /** Still no service in this outage: answer what has waited too long (`unavailable`); how many. */
  expire(outage: Outage, unavailable: string): number;
  /** The service refuses this relay for good (a wrong token): the relay ends with `message`. */
  refused(message: string): void;
}

/** A connection that held this long ends the outage before it. */
const STEADY_MS = 30_000;
/** How long a lost connection's requests in transit get to settle before what is left is judged. */
const SETTLE_MS = 3000;

export class ServiceConnection {
  readonly #target: RelayTarget;
  readonly #clock: Clock;
  readonly #connect: Connect;
  readonly #owner: ConnectionOwner;
  #link: Link | undefined;
  #connectedAt = 0;
  /** warming: no service yet (answering what the manifest and cache can); reconnecting: lost it. */
  #phase: "connecting" | "warming" | "ready" | "reconnecting" | "closed" = "connecting";
  /** POSTs not finished yet (an answer still coming, or its failure). */
  readonly #posting = new Set<Promise<PostResult>>();
  #outage: Outage | undefined;

  constructor(opts: { target: RelayTarget; clock: Clock; connect: Connect; owner: ConnectionOwner }) {
    this.#target = opts.target;
    this.#clock = opts.clock;
    this.#connect = opts.connect;
    this.#owner = opts.owner;
  }

  /** The current session; none while connecting, in an outage, or closed. */
  get link(): Link | undefined {
    return this.#link;
  }

  /** Attached, with no outage being recovered from: what waits may be sent. */
  get ready(): boolean {
    return this.#phase === "ready";
  }

  /** No service yet: the relay answers what the warm answers can. */
  get warming(): boolean {
    return this.#phase === "warming";
  }

  /** Attach to `first`, or (none yet) warm up while the target finds one. */
  async start(first: ServiceAddress | undefined): Promise<void> {
    if (first) {
      await this.#attach(first);
      this.#phase = "ready";
      this.#owner.up();
    } else {
      this.#phase = "warming";
      void this.#connectLoop("the service is up");
    }
  }

  /** Stop, and end the service session. */
  async close(): Promise<void> {
    this.#phase = "closed";
    const link = this.#link;
    this.#link = undefined;
    await link?.close();
  }

  /** A POST in transit: a lost session's POSTs settle before it is closed. */
  track(posting: Promise<PostResult>): Promise<PostResult> {
    this.#posting.add(posting);
    return posting.finally(() => this.#posting.delete(posting));
  }

  /** The service works for the host again: the outage is over. */
  served(): void {
    this.#outage = undefined;
  }

  /** A POST on `link` failed (it was not a 4xx answer): unless `link` was replaced, it is lost. */
  postFailed(
    r: Exclude<PostResult, { kind: "accepted" | "answered" | "rejected" | "busy" }>,
    link: Link,
  ): void {
    if (this.#link !== link) return; // already replaced
    if (r.kind === "refused") {
      return this.#refusedBy(r.refusal, `the service refused the relay (${r.refusal.status})`);
    }
    void this.lost(r.kind === "session-gone" ? "the service forgot this session" : r.why);
  }

  /** The service answered 401 or 403: end for good when the target says so, else find it again. */
  #refusedBy(r: Refusal, why: string): void {
    const fatal = this.#target.refused?.(r);
    if (fatal) return this.#refuse(fatal);
    void this.lost(why);
  }

  /** The service is gone: end its session, find or relaunch one, re-initialize, settle what was in flight. */
  async lost(why: string): Promise<void> {
    if (this.#phase !== "ready") return;
    this.#phase = "reconnecting";
    const old = this.#link;
    this.#link = undefined;
    this.#owner.detached();
    // what was on its way settles first (an answer, or a refusal that shows it never ran): closing
    // the link would cut a request in transit, one a draining service is still finishing
    if (this.#posting.size) {
      await Promise.race([Promise.allSettled([...this.#posting]), this.#sleep(SETTLE_MS)]);
    }
    void old?.close(); // DELETE: a session left behind would count as a client that is not there
    if (this.#clock.now() - this.#connectedAt >= STEADY_MS) this.#outage = undefined;
    log.warn(`relay: lost the service (${why}); reconnecting`);
    await this.#connectLoop("reconnected to the service");
  }

  /** Connect to `addr`; replay the host's initialize when the host already has its answer. */
  async #attach(addr: ServiceAddress): Promise<void> {
    const replay = this.#owner.replay();
    let link: Link | undefined = undefined; // set once open: messages during the replay are not yet for the host
    link = await openLink({
      connect: this.#connect,
      addr,
      clock: this.#clock,
      replay,
      handlers: {
        onMessage: (m) => link && this.#owner.fromService(m, link),
        streamBroke: async (why) => {
          if (this.#link !== link) return false;
          log.debug(`relay: service stream: ${why}`);
          // the session itself is asked (behind a balancer, /health is any replica's)
          if (link && await link.sessionAlive() && this.#link === link) return true;
          if (this.#link === link) void this.lost(why);
          return false;
        },
        streamRefused: (r) => {
          if (this.#link !== link) return;
          if (r === "session-gone") return void this.lost("the service forgot this session");
          this.#refusedBy(r, "the service refused the relay");
        },
      },
    });
    this.#link = link;
    this.#connectedAt = this.#clock.now();
    this.#owner.attached(replay !== undefined);
  }

  /**
   * Find (or launch) a service until one answers, pacing the attempts over the whole outage;
   * attach (replaying the host's initialize when the host has its answer); then the relay settles
   * what was in flight and sends what waited.
   */
  async #connectLoop(done: string): Promise<void> {
    const phase = this.#phase;
    const outage = this.#outage ??= { since: this.#clock.now(), connects: 0, warned: false };
    let said: string | undefined; // a reason worth a warning (an endpoint refused as untrusted), once
    for (let attempt = 1; this.#phase === phase; attempt++) {
      const tries = outage.connects + attempt - 1;
      if (tries > 0) {
        this.#expireWaiting(outage);
        await this.#sleep(backoffMs(tries));
        if (this.#phase !== phase) return;
      }
      try {
        // once a service has served this relay, its host's requests wait at most WAIT_MS however
        // long the search takes; a first launch (an upstream downloading) is waited for whole
        const search = this.#target.locate();
        const addr = await (this.#connectedAt > 0 ? this.#expiring(outage, search) : search);
        if (addr && this.#phase === phase) {
          await this.#attach(addr);
          break;
        }
      } catch (err) {
        const fatal = err instanceof ServiceRefused && this.#target.refused?.(err.refusal);
        if (fatal) return this.#refuse(fatal);
        if (err instanceof HermitError && err.message !== said) log.warn(`relay: ${(said = err.message)}`);
        else log.debug(`relay: attempt ${attempt} to reach the service: ${(err as Error)?.message ?? err}`);
      }
    }
    if (this.#phase !== phase) return void this.#link?.close();
    outage.connects++;
    log.info(`relay: ${done}`);
    this.#phase = "ready";
    this.#owner.up();
  }

  /**
   * Wait for `work`, expiring waiting requests once a second meanwhile: finding the service again
   * can itself take minutes (a relaunch waiting on another's lock, a service frozen while holding
   * it), and the wait limit holds through it.
   */
  async #expiring<T>(outage: Outage, work: Promise<T>): Promise<T> {
    let timer: unknown;
    const tick = () => {
      this.#expireWaiting(outage);
      timer = this.#clock.setTimeout(tick, 1000);
    };
    timer = this.#clock.setTimeout(tick, 1000);
    try {
      return await work;
    } finally {
      this.#clock.clearTimeout(timer);
    }
  }

  /** Requests that waited `WAIT_MS` in this outage get an error; the first time, a warning says so. */
  #expireWaiting(outage: Outage): void {
    const { unavailable } = this.#target;
    if (this.#owner.expire(outage, unavailable) === 0 || outage.warned) return;
    outage.warned = true;
    log.warn(`relay: ${unavailable}; requests that wait ${WAIT_MS / 1000} s get an error`);
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.#clock.setTimeout(resolve, ms));
  }

  /** Refused for good: nothing more is attempted. */
  #refuse(message: string): void {
    this.#phase = "closed";
    this.#owner.refused(message);
  }
}
