/**
 * The two ways an authorization answer comes back to `hermit login`: the loopback callback
 * server (127.0.0.1 only; a browser on this machine is redirected to it), or a line the person
 * pastes (the address the browser ended on, its query string, or just the code) when the
 * browser runs elsewhere. Parsing is pure.
 */
import process from "node:process";
import type { AddressInfo } from "node:net";

/**
 * Where an answer came from: the loopback callback (anyone on this machine, or any web page, can
 * send one), a pasted address or query string, or a pasted bare code (which has no `state`).
 */
export type AnswerOrigin = "callback" | "pasted-address" | "pasted-code";

/** `iss`: the authorization server that answered, when it says (RFC 9207). */
export type AuthAnswer =
  & { origin: AnswerOrigin; state?: string; iss?: string }
  & ({ kind: "code"; code: string } | { kind: "error"; error: string; description?: string });

export function answerFromParams(p: URLSearchParams, origin: AnswerOrigin): AuthAnswer | undefined {
  const extra = JSON.parse(
    JSON.stringify({ origin, state: p.get("state") ?? undefined, iss: p.get("iss") ?? undefined }),
  );
  const error = p.get("error");
  if (error) return { kind: "error", error, description: p.get("error_description") ?? undefined, ...extra };
  const code = p.get("code");
  return code ? { kind: "code", code, ...extra } : undefined;
}

/** What a pasted line means: an answer, a request to cancel, or nothing usable (undefined). */
export function parsePasted(line: string): AuthAnswer | "cancel" | undefined {
  const t = line.trim();
  if (t === "") return undefined;
  if (/^(q|quit|cancel|skip)$/i.test(t)) return "cancel";
  if (/^https?:\/\//i.test(t)) {
    try {
      return answerFromParams(new URL(t).searchParams, "pasted-address");
    } catch {
      return undefined;
    }
  }
  if (/(^|[?&])(code|error)=/.test(t)) {
    return answerFromParams(new URLSearchParams(t.replace(/^[^?]*\?/, "")), "pasted-address");
  }
  return /^[\x21-\x7e]+$/.test(t) ? { kind: "code", code: t, origin: "pasted-code" } : undefined;
}

export interface CallbackServer {
  port: number;
  redirectUrl: string;
  close(): Promise<void>;
}

const page = (title: string, text: string) =>
  `<!doctype html><meta charset="utf-8"><title>hermit: ${title}</title>` +
  `<body style="font-family:sans-serif;margin:3em"><h1>${title}</h1><p>${text}</p></body>`;

/**
 * Listen on 127.0.0.1:`port` (0: any free port) for `GET /callback?code=…&state=…`. Each answer
 * goes to `onAnswer`, which says whether it was taken (one without this login's `state` is not). `close()` lets
 * the pages already answered reach the browser first (node:http, which Deno and Bun both run,
 * says when a response is written; the platform's web server does not).
 */
export async function startCallbackServer(
  port: number,
  onAnswer: (a: AuthAnswer) => { taken: boolean; message: string },
): Promise<CallbackServer> {
  let writing = 0;
  // loaded by name only here: a static import puts Bun's precompiled node:http (~450 KB) in the binary
  const { createServer } = process.getBuiltinModule("node:http") as typeof import("node:http");
  const server = createServer((req, res) => {
    const send = (status: number, title: string, text: string) => {
      writing++;
      res.writeHead(status, { "content-type": "text/html; charset=utf-8", connection: "close" });
      res.end(page(title, text), () => writing--);
    };
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (req.method !== "GET" || url.pathname !== "/callback") return send(404, "Not found", "Nothing here.");
    const answer = answerFromParams(url.searchParams, "callback");
    if (!answer) return send(400, "Nothing to do", "This address carries no authorization code.");
    const { taken, message } = onAnswer(answer);
    send(taken ? 200 : 400, taken ? "Back to the terminal" : "Not used", message);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const actual = (server.address() as AddressInfo).port;
  return {
    port: actual,
    redirectUrl: `http://127.0.0.1:${actual}/callback`,
    close: async () => {
      for (let i = 0; i < 40 && writing > 0; i++) await new Promise((r) => setTimeout(r, 50));
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections?.();
      });
    },
  };
}
