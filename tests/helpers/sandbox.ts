/**
 * For the sandbox's end-to-end tests: what this kernel offers (Landlock's ABI, asked through the
 * test runtime's FFI; unprivileged user namespaces, tried with util-linux's `unshare`), the
 * suite's requirements from that, and loopback listeners that count what reaches them.
 */
import { spawnSync } from "node:child_process";
import dgram from "node:dgram";
import net from "node:net";
import { libc } from "../../src/platform/syscalls.ts";
import { requirements } from "./rootfs.ts";

export function landlockAbi(): number {
  const c = libc();
  return c ? Math.max(0, c.call("landlock_create_ruleset", 0, 0, 1)) : 0;
}

export function usernsWork(): boolean {
  return spawnSync("unshare", ["--user", "--net", "true"], { stdio: "ignore" }).status === 0;
}

/** The sandbox suites need Landlock with scoping (ABI 6, Linux 6.12) and user namespaces. */
export function sandboxRequirements() {
  const abi = landlockAbi();
  return requirements([
    {
      what: `Landlock ABI 6 or later (this kernel: ${abi || "none"})`,
      ok: abi >= 6,
      fix: "Linux 6.12 or later with landlock in the lsm= boot parameter",
    },
    {
      what: "unprivileged user namespaces",
      ok: usernsWork(),
      fix: "sysctl -w kernel.unprivileged_userns_clone=1 user.max_user_namespaces=15000",
    },
  ]);
}

export interface Counter {
  port: number;
  /** Connections (TCP) or datagrams (UDP) received so far. */
  count(): number;
  close(): Promise<void>;
}

/** Listen on loopback; `close` ends every connection still open (a server waits for them). */
function serve(server: net.Server, count: () => number): Promise<Counter> {
  const open = new Set<net.Socket>();
  server.on("connection", (s) => (open.add(s), s.once("close", () => open.delete(s))));
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        port: (server.address() as net.AddressInfo).port,
        count,
        close: () => {
          for (const s of open) s.destroy();
          return new Promise((r) => server.close(() => r()));
        },
      }))
  );
}

export function tcpCounter(): Promise<Counter> {
  let n = 0;
  const server = net.createServer((s) => {
    n++;
    s.on("error", () => {});
    s.end();
  });
  return serve(server, () => n);
}

export function udpCounter(): Promise<Counter> {
  let n = 0;
  const socket = dgram.createSocket("udp4");
  socket.on("message", () => n++);
  return new Promise((resolve) =>
    socket.bind(0, "127.0.0.1", () =>
      resolve({
        port: socket.address().port,
        count: () => n,
        close: () => new Promise((r) => socket.close(() => r())),
      }))
  );
}

/** An HTTP listener on loopback that answers every request with `body` and counts them. */
export function httpCounter(body: string): Promise<Counter> {
  let n = 0;
  const server = net.createServer((s) => {
    s.on("error", () => {});
    s.once("data", () => {
      n++;
      s.end(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
    });
  });
  return serve(server, () => n);
}
