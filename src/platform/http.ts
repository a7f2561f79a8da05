/**
 * A web-standard HTTP server (`Request` in, `Response` out) on whichever runtime hermit runs:
 * `Deno.serve` under Deno, `Bun.serve` under Bun and in the compiled binary. The MCP SDK's
 * web-standard Streamable HTTP transport plugs straight into it. A handler that throws gets a
 * plain 500 (never the runtime's error page with a stack trace); the error goes to the log.
 */
import { log } from "../log.ts";
import { runtime } from "./runtime.ts";

export type Handler = (req: Request, info: { remoteAddress: string }) => Response | Promise<Response>;

export interface HttpServer {
  hostname: string;
  port: number;
  close(): Promise<void>;
}

interface DenoServe {
  serve(
    opts: {
      hostname: string;
      port: number;
      onListen?: (a: { hostname: string; port: number }) => void;
      onError?: (error: unknown) => Response | Promise<Response>;
    },
    handler: (req: Request, info: { remoteAddr: { hostname: string } }) => Response | Promise<Response>,
  ): { finished: Promise<void>; shutdown(): Promise<void>; addr: { hostname: string; port: number } };
}

interface BunServe {
  serve(opts: {
    hostname: string;
    port: number;
    idleTimeout?: number;
    development?: boolean;
    error?: (error: Error) => Response | Promise<Response>;
    fetch: (
      req: Request,
      server: { requestIP(r: Request): { address: string } | null },
    ) => Response | Promise<Response>;
  }): { hostname: string; port: number; stop(force?: boolean): Promise<void> | void };
}

const g = globalThis as unknown as { Deno?: DenoServe; Bun?: BunServe };

/** What a client sees when a handler throws: a bare 500; the error itself is logged. */
function internalError(err: unknown): Response {
  log.error(`HTTP request failed: ${err instanceof Error ? err.message : String(err)}`);
  if (err instanceof Error && err.stack) log.debug(err.stack);
  return new Response("Internal Server Error\n", {
    status: 500,
    headers: { "content-type": "text/plain; charset=utf-8" },
  });
}

export function serveHttp(hostname: string, port: number, handler: Handler): Promise<HttpServer> {
  if (runtime === "deno") {
    return new Promise((resolve) => {
      const server = g.Deno!.serve(
        { hostname, port, onListen: () => {}, onError: internalError },
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
      development: false,
      error: internalError,
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
