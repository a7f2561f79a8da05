/**
 * Whether an authorization answer is the one `hermit login` waits for. The loopback callback can
 * be reached by anyone on this machine and by any web page (an `<img>` is enough), so an answer
 * must carry the `state` this login sent — only a pasted bare code has none to carry, and the
 * person typed it. It must not name another authorization server than the verified issuer, and
 * must name it when that server promises to (RFC 9207 §2.4; a pasted bare code again exempt).
 * Only the first answer taken is used. Pure.
 */
import type { AuthAnswer } from "./callback.ts";
import { sameIssuer } from "./client.ts";

/** What the login waits for, once it has sent the person to the authorization server. */
export interface Awaited {
  expectedState: string;
  /** The verified issuer (see discovery.ts). */
  issuer?: string;
  issRequired: boolean;
}

export interface Verdict {
  taken: boolean;
  message: string;
}

const NOT_USED = "it was not used";

/** `taken`: whether an earlier answer was already taken. */
export function judgeAnswer(
  a: AuthAnswer,
  awaited: Awaited | undefined,
  taken: boolean,
): Verdict {
  const no = (message: string): Verdict => ({ taken: false, message });
  if (!awaited || (a.state !== undefined && a.state !== awaited.expectedState)) {
    return no(`This answer belongs to another login attempt; ${NOT_USED}.`);
  }
  if (taken) return no("Not used: this login already has its answer.");
  const bare = a.origin === "pasted-code";
  if (a.state === undefined && !bare) {
    const hint = a.origin === "pasted-address" ? " (paste just the code to use it anyway)" : "";
    return no(`This answer carries no state, so it may not come from this login; ${NOT_USED}${hint}.`);
  }
  if (a.iss !== undefined && awaited.issuer !== undefined && !sameIssuer(a.iss, awaited.issuer)) {
    return no(`This answer comes from ${a.iss}, not ${awaited.issuer}; ${NOT_USED}.`);
  }
  if (a.iss === undefined && awaited.issRequired && !bare) {
    return no(
      `This answer does not name its authorization server (iss), which ${awaited.issuer} always does ` +
        `(RFC 9207); ${NOT_USED}.`,
    );
  }
  return { taken: true, message: "hermit received the answer; the terminal says how the login went." };
}
