/**
 * The egress proxy behind a `network: [host:port, …]` policy: one per confined entry, on
 * 127.0.0.1, inside hermit. It speaks just enough HTTP/1.1 for clients that honour
 * `HTTPS_PROXY`/`HTTP_PROXY`/`ALL_PROXY`: `CONNECT host:port` (tunnels, for HTTPS and anything
 * else over TCP) and absolute-form plain HTTP requests (forwarded with `Connection: close`, so
 * every new request comes back through the check). Only the listed destinations are reached; the
 * others get 403 and one log line. A listed name is resolved here, once, and the proxy connects
 * to the address it checked (no second lookup for a rebinding DNS to answer differently): one on
 * the host's loopback or link-local network, the unspecified address or a cloud's metadata
 * service is refused unless the entry names that address itself or `localhost`. The kernel (Landlock) lets the child connect
 * to this proxy's port and no other.
 */
import net from "node:net";
import process from "node:process";
import { formatDestination } from "../manifest/sandbox.ts";
import type { Destination } from "../manifest/types.ts";
import { internalAddress } from "./internal_address.ts";

/** A name's addresses (the production one is `dns.lookup`; a test gives its own). */
export type Resolve = (host: string) => Promise<readonly { address: string }[]>;

// node:dns by name would carry Bun's precompiled copy of it into the binary (builtin_imports.test.ts)
const systemResolve: Resolve = (host) =>
  (process.getBuiltinModule("node:dns") as typeof import("node:dns")).promises.lookup(host, {
    all: true,
    verbatim: true,
  });

const MAX_HEAD = 64 * 1024;
const BAD_GATEWAY = "HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n";

/** Is `host:port` one of `allow`? `*.example.com` matches its subdomains, not itself. Pure. */
export function allowedDestination(allow: readonly Destination[], host: string, port: number): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "");
  return allow.some((d) =>
    d.port === port && (d.host === h || (d.host.startsWith("*.") && h.endsWith(d.host.slice(1))))
  );
}

/**
 * The addresses to try for `host:port` (already allowed), in order, from those it resolved to:
 * the ones not host-internal, or all when an entry for this port names `host` as an IP literal
 * or `localhost`; none left, why it is refused. Pure.
 */
export function usableAddresses(
  allow: readonly Destination[],
  host: string,
  port: number,
  addresses: readonly string[],
): { addresses: string[] } | { refused: string } {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "");
  const named = allow.some((d) =>
    d.port === port && d.host === h && (h === "localhost" || net.isIP(h) !== 0)
  );
  const usable = named ? [...addresses] : addresses.filter((a) => !internalAddress(a));
  if (usable.length) return { addresses: usable };
  if (!addresses.length) return { refused: "it does not resolve" };
  return {
    refused: `it resolves to ${addresses[0]} (${
      internalAddress(addresses[0])
    }); only an entry naming that address (or localhost) reaches it`,
  };
}

/** The destination a request head asks for: `CONNECT h:p` or an absolute `http://` URL. Pure. */
export function requestTarget(
  head: string,
): { kind: "connect" | "http"; host: string; port: number; path?: string } | undefined {
  const line = head.slice(0, head.indexOf("\r\n"));
  const m = /^([A-Z]+) (\S+) HTTP\/1\.[01]$/.exec(line);
  if (!m) return undefined;
  if (m[1] === "CONNECT") {
    // a host name or an IP literal: a NUL or a `%` would end or change the name getaddrinfo sees
    const t = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+):(\d{1,5})$/.exec(m[2]);
    const port = Number(t?.[2]);
    return t && port >= 1 && port <= 65535
      ? { kind: "connect", host: t[1].replace(/^\[(.*)\]$/, "$1"), port }
      : undefined;
  }
  let url: URL;
  try {
    url = new URL(m[2]);
  } catch {
    return undefined;
  }
  if (url.protocol !== "http:") return undefined;
  return {
    kind: "http",
    host: url.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: Number(url.port || 80),
    path: url.pathname + url.search,
  };
}

/** The first request re-written for the origin server: origin-form, `Connection: close`. Pure. */
export function originHead(head: string, path: string): string {
  const lines = head.split("\r\n");
  const [method, , version] = lines[0].split(" ");
  const kept = lines.slice(1).filter((l) =>
    l && !/^(proxy-connection|connection|proxy-authorization):/i.test(l)
  );
  return [`${method} ${path} ${version}`, ...kept, "Connection: close", "", ""].join("\r\n");
}

export class EgressProxy {
  readonly #server: net.Server;
  readonly #sockets = new Set<net.Socket>();
  port = 0;

  constructor(
    readonly allow: readonly Destination[],
    readonly onDenied: (destination: string, why: string) => void,
    readonly resolve: Resolve = systemResolve,
  ) {
    this.#server = net.createServer((client) => this.#serve(client));
  }

  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.#server.once("error", reject);
      this.#server.listen(0, "127.0.0.1", () => {
        this.port = (this.#server.address() as net.AddressInfo).port;
        (this.#server as { unref?: () => void }).unref?.();
        resolve(this.port);
      });
    });
  }

  close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  #track(s: net.Socket): void {
    this.#sockets.add(s);
    s.once("close", () => this.#sockets.delete(s));
    s.on("error", () => s.destroy());
  }

  #serve(client: net.Socket): void {
    this.#track(client);
    let buf = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      const end = buf.indexOf("\r\n\r\n");
      if (end < 0) {
        if (buf.length > MAX_HEAD) client.end("HTTP/1.1 431 Request Header Fields Too Large\r\n\r\n");
        return;
      }
      client.off("data", onData);
      client.pause();
      const head = buf.subarray(0, end + 4).toString("latin1");
      this.#forward(client, head, buf.subarray(end + 4));
    };
    client.on("data", onData);
  }

  #forward(client: net.Socket, head: string, rest: Buffer): void {
    const t = requestTarget(head);
    if (!t) {
      client.end(
        "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\nhermit's sandbox proxy takes CONNECT and http:// requests\n",
      );
      return;
    }
    const shown = formatDestination({ host: t.host, port: t.port });
    const deny = (why: string, body: string) => {
      this.onDenied(shown, why);
      client.end(
        `HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nhermit sandbox: ${body}\n`,
      );
    };
    if (!allowedDestination(this.allow, t.host, t.port)) {
      deny("not in sandbox.network", `${shown} is not in this server's sandbox.network`);
      return;
    }
    const literal = net.isIP(t.host) !== 0;
    (literal ? Promise.resolve([{ address: t.host }]) : this.resolve(t.host)).then(
      (found) => {
        if (client.destroyed) return;
        const usable = usableAddresses(this.allow, t.host, t.port, found.map((a) => a.address));
        if ("refused" in usable) deny(usable.refused, `${shown}: ${usable.refused}`);
        else this.#connect(client, head, rest, t, usable.addresses);
      },
      () => void (client.destroyed || client.end(BAD_GATEWAY)),
    );
  }

  /**
   * Connect to the checked `addresses` (never the name again: a rebinding DNS gets no second
   * question), the next when one refuses, and join the two sockets.
   */
  #connect(
    client: net.Socket,
    head: string,
    rest: Buffer,
    t: NonNullable<ReturnType<typeof requestTarget>>,
    addresses: readonly string[],
  ): void {
    if (client.destroyed) return;
    const [address, ...others] = addresses;
    const next = () => {
      if (client.destroyed) return;
      if (others.length) this.#connect(client, head, rest, t, others);
      else client.end(BAD_GATEWAY);
    };
    let upstream: net.Socket;
    try {
      upstream = net.connect({ host: address, port: t.port });
    } catch {
      // a runtime that refuses the address at once (Deno throws where Node emits an error)
      return next();
    }
    this.#track(upstream);
    let connected = false;
    const drop = () => upstream.destroy();
    client.once("close", drop);
    upstream.once("error", () => {
      if (connected) return client.destroy();
      client.off("close", drop);
      next();
    });
    upstream.once("connect", () => {
      connected = true;
      if (t.kind === "connect") client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      else upstream.write(originHead(head, t.path!));
      if (rest.length) upstream.write(rest);
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
      upstream.once("close", () => client.destroy());
    });
  }
}
