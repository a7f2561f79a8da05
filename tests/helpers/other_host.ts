/**
 * A plain HTTP listener reached at an address off loopback, recording what arrives: where a
 * test needs to see whether hermit sends credentials in cleartext to another host. The address
 * is this machine's first non-loopback IPv4 one; without one it is a documentation address that
 * never answers (`reachable` false: then nothing can arrive, and tests judge by hermit's output).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";

export interface Arrival {
  method: string;
  path: string;
  authorization?: string;
}

export interface OtherHost {
  /** `http://ADDRESS:PORT`, no trailing slash. */
  base: string;
  reachable: boolean;
  seen: Arrival[];
  close(): Promise<void>;
}

/** Answers `/health` 200 `{"status":"ok"}`, anything else 404. */
export async function startOtherHost(): Promise<OtherHost> {
  const seen: Arrival[] = [];
  const server = createServer((req, res) => {
    seen.push({ method: req.method ?? "", path: req.url ?? "", authorization: req.headers.authorization });
    req.resume();
    if (req.url === "/health") {
      res.writeHead(200, { "content-type": "application/json" }).end('{"status":"ok"}');
    } else res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, "0.0.0.0", r));
  const ours = Object.values(os.networkInterfaces()).flat().find((a) =>
    a && !a.internal && a.family === "IPv4"
  );
  const port = (server.address() as AddressInfo).port;
  return {
    base: `http://${ours?.address ?? "192.0.2.1"}:${port}`,
    reachable: ours !== undefined,
    seen,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
