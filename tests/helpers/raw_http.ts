/**
 * HTTP over a raw socket, for requests `fetch` will not send: HTTP/1.0 without a Host header, an
 * empty Host, a Host of the test's choosing. One request per connection (`connection: close` is
 * added to HTTP/1.1 requests); the answer is parsed into status, headers and body. Also: many idle
 * keep-alive connections at once (what an attacker holding descriptors does).
 */
import { connect, type Socket } from "node:net";

/** An initialize request's body, as raw requests send it. */
export const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } },
});

/** The headers of an MCP POST with the token, Host aside. */
export const mcpHeaders = (token: string) =>
  `content-type: application/json\r\naccept: application/json, text/event-stream\r\nauthorization: Bearer ${token}`;

/** The head of a raw MCP POST to `/mcp` on 127.0.0.1 with the token (add the body). */
export const mcpPost = (token: string) => `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n${mcpHeaders(token)}`;

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** `head` is the request line and headers without the final blank line, e.g. "GET /health HTTP/1.0". */
export function rawRequest(port: number, head: string, body = "", timeoutMs = 10_000): Promise<RawAnswer> {
  const http11 = /HTTP\/1\.1$/m.test(head.split("\r\n")[0]);
  const lines = [
    head,
    ...(http11 && !/^connection:/im.test(head) ? ["connection: close"] : []),
    ...(body ? [`content-length: ${Buffer.byteLength(body)}`] : []),
  ];
  return new Promise((resolve, reject) => {
    const sock = connect(port, "127.0.0.1", () => sock.write(`${lines.join("\r\n")}\r\n\r\n${body}`));
    let got = "";
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`no complete answer within ${timeoutMs} ms to ${head.split("\r\n")[0]}; got: ${got}`));
    }, timeoutMs);
    sock.setEncoding("utf8").on("data", (d) => (got += d));
    sock.on("error", (e) => (clearTimeout(timer), reject(e)));
    sock.on("close", () => {
      clearTimeout(timer);
      const at = got.indexOf("\r\n\r\n");
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(got);
      if (!m || at < 0) return reject(new Error(`not an HTTP answer: ${JSON.stringify(got.slice(0, 200))}`));
      const headers: Record<string, string> = {};
      for (const line of got.slice(0, at).split("\r\n").slice(1)) {
        const c = line.indexOf(":");
        if (c > 0) headers[line.slice(0, c).trim().toLowerCase()] = line.slice(c + 1).trim();
      }
      resolve({ status: Number(m[1]), headers, body: got.slice(at + 4) });
    });
  });
}

/**
 * `n` connections that each send one keep-alive request (by default `GET /health`; else `head`
 * and `body`) and then stay idle; resolves once each has its answer or was refused. `close()`
 * ends them all.
 */
export async function idleConnections(
  port: number,
  n: number,
  request?: { head: string; body: string },
): Promise<{ answered: number; close(): void; open(): number }> {
  const text = request
    ? `${request.head}\r\nconnection: keep-alive\r\ncontent-length: ${
      Buffer.byteLength(request.body)
    }\r\n\r\n${request.body}`
    : "GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: keep-alive\r\n\r\n";
  const socks: Socket[] = [];
  let answered = 0;
  await Promise.all(Array.from({ length: n }, () =>
    new Promise<void>((resolve) => {
      const sock = connect(port, "127.0.0.1", () => sock.write(text));
      socks.push(sock);
      const timer = setTimeout(resolve, 10_000);
      sock.once("data", () => (answered++, clearTimeout(timer), resolve()));
      sock.on("error", () => (clearTimeout(timer), resolve()));
      sock.on("close", () => (clearTimeout(timer), resolve()));
    })));
  return {
    answered,
    close: () => socks.forEach((s) => s.destroy()),
    open: () => socks.filter((s) => !s.destroyed && s.readyState === "open").length,
  };
}
