/**
 * A web-standard HTTP server (`Request` in, `Response` out) on whichever runtime hermit runs:
 * `Deno.serve` under Deno, `Bun.serve` under Bun and in the compiled binary. The MCP SDK's
 * web-standard Streamable HTTP transport plugs straight into it.
 */
import { runtime } from "./runtime.ts";

export type Handler = (req: Request, info: { remoteAddress: string }) => Response | Promise<Response>;

export interface HttpServer {
  hostname: string;
  port: number;
  close(): Promise<void>;
}

interface DenoServe {
  serve(
    opts: { hostname: string; port: number; onListen?: (a: { hostname: string; port: number }) => void },
    handler: (req: Request, info: { remoteAddr: { hostname: string } }) => Response | Promise<Response>,
  ): { finished: Promise<void>; shutdown(): Promise<void>; addr: { hostname: string; port: number } };
}

interface BunServe {
  serve(opts: {
    hostname: string;
    port: number;
    idleTimeout?: number;
    fetch: (
      req: Request,
      server: { requestIP(r: Request): { address: string } | null },
    ) => Response | Promise<Response>;
  }): { hostname: string; port: number; stop(force?: boolean): Promise<void> | void };
}

const g = globalThis as unknown as { Deno?: DenoServe; Bun?: BunServe };

export function serveHttp(hostname: string, port: number, handler: Handler): Promise<HttpServer> {
  if (runtime === "deno") {
    return new Promise((resolve) => {
      const server = g.Deno!.serve(
        { hostname, port, onListen: () => {} },
        (req, info) => handler(req, { remoteAddress: info.remoteAddr.hostname }),
      );
      resolve({ hostname, port: server.addr.port, close: () => server.shutdown() });
    });
  }
  if (runtime === "bun") {
    // idleTimeout 0: long-lived SSE streams must not be cut by the server
    const server = g.Bun!.serve({
      hostname,
      port,
      idleTimeout: 0,
      fetch: (req, srv) => handler(req, { remoteAddress: srv.requestIP(req)?.address ?? "" }),
    });
    return Promise.resolve({
      hostname,
      port: server.port,
      close: async () => {
        await server.stop(true);
      },
    });
  }
  return Promise.reject(new Error("the HTTP service needs Deno or Bun"));
}
