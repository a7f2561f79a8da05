/**
 * A web-standard HTTP server (`Request` in, `Response` out) on whichever runtime hermit runs:
 * `Deno.serve` under Deno, `Bun.serve` under Bun and in the compiled binary. The MCP SDK's
 * web-standard Streamable HTTP transport plugs straight into it. A handler that throws gets a
 * plain 500 (never the runtime's error page with a stack trace); the error goes to the log.
 *
 * Connections: under Bun a keep-alive connection idle for `IDLE_CONNECTION_SECONDS` is closed (a
 * request whose answer may take long is exempt from `keepOpen()` until its answer is ready; a
 * stream's keep-alive comments keep it from idling), `openRequests()` counts
 * the requests being answered (streams included) and `closeIdle()` drops idle keep-alive
 * connections now. Deno.serve offers neither: there only handler calls are counted.
 */
import { log } from "../log.ts";
import { runtime } from "./runtime.ts";

export interface RequestInfo {
  remoteAddress: string;
  /**
   * This request may stay unanswered longer than the idle timeout (a call, a held request); call
   * what it returns once its answer is ready, so the connection idles out again afterwards.
   */
  keepOpen(): () => void;
}

export type Handler = (req: Request, info: RequestInfo) => Response | Promise<Response>;

export interface HttpServer {
  hostname: string;
  port: number;
  /** Requests being answered right now, this one included. */
  openRequests(): number;
  /** Close keep-alive connections that carry no request. */
  closeIdle(): void;
  close(): Promise<void>;
}

/** A keep-alive connection without a request for this long is closed (Bun). */
export const IDLE_CONNECTION_SECONDS = 30;

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
    fetch: (req: Request, server: BunServer) => Response | Promise<Response>;
  }): BunServer & { hostname: string; port: number; stop(force?: boolean): Promise<void> | void };
}

interface BunServer {
  requestIP(r: Request): { address: string } | null;
  timeout(r: Request, seconds: number): void;
  readonly pendingRequests: number;
  closeIdleConnections(): void;
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
      let open = 0;
      const keepOpen = () => () => {};
      const server = g.Deno!.serve(
        { hostname, port, onListen: () => {}, onError: internalError },
        async (req, info) => {
          open++;
          try {
            return await handler(req, { remoteAddress: info.remoteAddr.hostname, keepOpen });
          } finally {
            open--;
          }
        },
      );
      resolve({
        hostname,
        port: server.addr.port,
        openRequests: () => open,
        closeIdle: () => {},
        close: () => server.shutdown(),
      });
    });
  }
  if (runtime === "bun") {
    // streams write a keep-alive comment well within the idle timeout; calls opt out of it
    const server = g.Bun!.serve({
      hostname,
      port,
      idleTimeout: IDLE_CONNECTION_SECONDS,
      development: false,
      error: internalError,
      fetch: (req, srv) =>
        handler(req, {
          get remoteAddress() {
            return srv.requestIP(req)?.address ?? "";
          },
          keepOpen: () => {
            srv.timeout(req, 0);
            return () => srv.timeout(req, IDLE_CONNECTION_SECONDS);
          },
        }),
    });
    return Promise.resolve({
      hostname,
      port: server.port,
      openRequests: () => server.pendingRequests,
      closeIdle: () => server.closeIdleConnections(),
      close: async () => {
        await server.stop(true);
      },
    });
  }
  return Promise.reject(new Error("the HTTP service needs Deno or Bun"));
}
