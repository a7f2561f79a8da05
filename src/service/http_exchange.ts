/**
 * One POST's requests on a client's Streamable HTTP session (`http_session.ts`), until all are
 * answered: what the session keeps of it, and the HTTP answers that end it while its answer is
 * still undecided: the answers as plain JSON (one, or a batch), or, when the session ends first,
 * a 500 saying the outcome is unknown (not a 404 or 503, which would tell a client it never ran).
 */
import { ErrorCode, type RequestId } from "@modelcontextprotocol/sdk/types.js";
import { jsonRpcError } from "./http_errors.ts";
import type { SseStream } from "./sse.ts";

/** One POST's requests, until all are answered. */
export interface Exchange {
  stream: string;
  pending: Set<RequestId>;
  batch: boolean;
  /** Set while the HTTP answer is still undecided (plain JSON unless something streams). */
  decide?: (r: Response) => void;
  answers: string[];
  /** The client takes JSON only: nothing streams on this exchange. */
  jsonOnly: boolean;
  /** The live SSE connection, if any (none after a close for polling until the client resumes). */
  sse?: SseStream;
  timer?: ReturnType<typeof setTimeout>;
}

/** Every request of `ex` answered before anything streamed: its answers as plain JSON. */
export function jsonAnswer(ex: Exchange, sessionId: string | undefined): Response {
  const body = ex.batch ? `[${ex.answers.join(",")}]` : ex.answers[0];
  return new Response(body, {
    status: 200,
    headers: {
      "content-type": "application/json",
      ...(sessionId ? { "mcp-session-id": sessionId } : {}),
    },
  });
}

/** The session ended while the exchange's requests ran. */
export function endedAnswer(): Response {
  return jsonRpcError(
    500,
    ErrorCode.InternalError,
    "the session ended while this request ran; whether it took effect is unknown",
  );
}
