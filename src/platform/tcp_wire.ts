/**
 * A TCP connection as `plain_fetch.ts` needs it: bytes out (buffered until the socket drains, so
 * a large request is written whole), bytes in, one notice when it ends, and whether it keeps the
 * process alive. Bun's own `Bun.connect` in Bun (no stream objects in between), `node:net`
 * elsewhere (Deno running the sources).
 */
import { Buffer } from "node:buffer";
import type { Socket } from "node:net";
import process from "node:process";

export interface WireEvents {
  data(bytes: Uint8Array): void;
  /** The connection ended (by either side); `err` when it broke. Called once. */
  closed(err?: Error): void;
}

export interface Wire {
  write(bytes: Uint8Array): void;
  close(): void;
  ref(): void;
  unref(): void;
  /** Are bytes written still waiting to go out (the peer has not read them)? */
  pending(): boolean;
}

interface BunSocket {
  write(bytes: Uint8Array): number;
  end(): void;
  terminate(): void;
  ref(): void;
  unref(): void;
  setNoDelay?(on: boolean): void;
}
interface BunConnect {
  connect(opts: {
    hostname: string;
    port: number;
    socket: {
      data(s: BunSocket, d: Uint8Array): void;
      drain(s: BunSocket): void;
      close(s: BunSocket, err?: Error): void;
      end(s: BunSocket): void;
      error(s: BunSocket, err: Error): void;
    };
  }): Promise<BunSocket>;
}

const bun = (globalThis as { Bun?: BunConnect }).Bun;

async function connectBun(b: BunConnect, host: string, port: number, ev: WireEvents): Promise<Wire> {
  let queued: Uint8Array | undefined;
  let ended = false;
  const closed = (err?: Error) => {
    if (ended) return;
    ended = true;
    ev.closed(err);
  };
  const sock = await b.connect({
    hostname: host,
    port,
    socket: {
      data: (_s, d) => ev.data(d),
      drain: (s) => {
        if (!queued) return;
        const n = Math.max(0, s.write(queued));
        queued = n < queued.length ? queued.subarray(n) : undefined;
      },
      close: (_s, err) => closed(err),
      end: (s) => (s.end(), closed()),
      error: (_s, err) => closed(err),
    },
  });
  sock.setNoDelay?.(true);
  return {
    write: (bytes) => {
      if (queued) queued = Buffer.concat([queued, bytes]);
      else {
        const n = Math.max(0, sock.write(bytes));
        if (n < bytes.length) queued = bytes.subarray(n);
      }
    },
    close: () => sock.terminate(),
    ref: () => sock.ref(),
    unref: () => sock.unref(),
    pending: () => queued !== undefined,
  };
}

async function connectNode(host: string, port: number, ev: WireEvents): Promise<Wire> {
  const net = process.getBuiltinModule("node:net") as typeof import("node:net");
  const sock: Socket = net.connect({ host, port, noDelay: true });
  await new Promise<void>((resolve, reject) => {
    sock.once("connect", resolve).once("error", reject);
  });
  let ended = false;
  const closed = (err?: Error) => {
    if (ended) return;
    ended = true;
    ev.closed(err);
  };
  sock.on("data", (d: Buffer) => ev.data(d)).on("error", closed).on("close", () => closed()).on("end", () => {
    sock.end();
    closed();
  });
  return {
    write: (bytes) => void sock.write(bytes),
    close: () => void sock.destroy(),
    ref: () => void sock.ref(),
    unref: () => void sock.unref(),
    pending: () => sock.writableLength > 0,
  };
}

/** Connect to `host:port` (a bare address: no brackets around IPv6); rejects as the OS refuses. */
export function connectWire(host: string, port: number, ev: WireEvents): Promise<Wire> {
  return bun ? connectBun(bun, host, port, ev) : connectNode(host, port, ev);
}
