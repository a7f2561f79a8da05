/**
 * A loopback HTTP proxy that adds a bearer token to every request it forwards (streaming both
 * ways, SSE included). For clients that cannot send headers, such as the MCP conformance suite.
 * Host and Origin pass through unchanged, so the service's own checks still apply.
 */
import http from "node:http";

export async function startAuthProxy(
  target: string,
  token: string,
): Promise<{ url: string; close(): Promise<void> }> {
  const base = new URL(target);
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (typeof v === "string" && k !== "host" && k !== "content-length") headers[k] = v;
    }
    headers.authorization = `Bearer ${token}`;
    if (req.headers.host) headers["x-forwarded-host"] = req.headers.host;
    try {
      const upstream = await fetch(new URL(req.url ?? "/", base), {
        method: req.method,
        headers: { ...headers, host: req.headers.host?.replace(/:\d+$/, "") + ":" + base.port },
        body: chunks.length ? Buffer.concat(chunks) : undefined,
      });
      res.writeHead(upstream.status, Object.fromEntries(upstream.headers.entries()));
      if (!upstream.body) return res.end();
      const reader = upstream.body.getReader();
      req.on("close", () => void reader.cancel().catch(() => {}));
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        res.write(value);
      }
      res.end();
    } catch {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}${base.pathname}`,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections?.();
        server.close(() => r());
      }),
  };
}
