/**
 * The egress proxy behind a `network: [host:port, …]` policy: one per confined entry, on
 * 127.0.0.1, inside hermit. It speaks just enough HTTP/1.1 for clients that honour
 * `HTTPS_PROXY`/`HTTP_PROXY`/`ALL_PROXY`: `CONNECT host:port` (tunnels, for HTTPS and anything
 * else over TCP) and absolute-form plain HTTP requests (forwarded with `Connection: close`, so
 * every new request comes back through the check). Only the listed destinations are reached; the
 * others get 403 and one log line. The kernel (Landlock) lets the child connect to this proxy's
 * port and no other.
 */
import net from "node:net";
import { formatDestination } from "../manifest/sandbox.ts";
import type { Destination } from "../manifest/types.ts";

const MAX_HEAD = 64 * 1024;

/** Is `host:port` one of `allow`? `*.example.com` matches its subdomains, not itself. Pure. */
export function allowedDestination(allow: readonly Destination[], host: string, port: number): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "");
  return allow.some((d) =>
    d.port === port && (d.host === h || (d.host.startsWith("*.") && h.endsWith(d.host.slice(1))))
  );
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
    readonly onDenied: (destination: string) => void,
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
    if (!allowedDestination(this.allow, t.host, t.port)) {
      this.onDenied(shown);
      client.end(
        `HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n` +
          `hermit sandbox: ${shown} is not in this server's sandbox.network\n`,
      );
      return;
    }
    let upstream: net.Socket;
    try {
      upstream = net.connect({ host: t.host, port: t.port });
    } catch {
      // a runtime that refuses the address at once (Deno throws where Node emits an error)
      client.end("HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n");
      return;
    }
    this.#track(upstream);
    upstream.once("error", () => {
      if (!client.destroyed) client.end("HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n");
    });
    upstream.once("connect", () => {
      if (t.kind === "connect") client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      else upstream.write(originHead(head, t.path!));
      if (rest.length) upstream.write(rest);
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
    client.once("close", () => upstream.destroy());
    upstream.once("close", () => client.destroy());
  }
}
