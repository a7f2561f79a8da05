/**
 * Which authorization answers `hermit login` uses: one from the loopback callback must carry this
 * login's `state` (any local user or web page can reach the callback), only a pasted bare code
 * may lack it; `iss` must be the verified issuer, and present when the server promises it (RFC
 * 9207 §2.4); the first answer taken is the only one used.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { type Awaited, judgeAnswer } from "../../../src/mcp/oauth/answer.ts";
import { answerFromParams, type AuthAnswer, parsePasted } from "../../../src/mcp/oauth/callback.ts";

const AS = "https://auth.example/";
const awaited: Awaited = { expectedState: "s1", issuer: AS, issRequired: false };
const callback = (query: string) => answerFromParams(new URLSearchParams(query), "callback")!;
const pasted = (line: string) => parsePasted(line) as AuthAnswer;
const judge = (a: AuthAnswer, w: Awaited | undefined = awaited, taken = false) => judgeAnswer(a, w, taken);

describe("judgeAnswer", () => {
  it("refuses a callback answer without state, an error or a code alike", () => {
    for (const q of ["error=access_denied", "code=anything", "code=x&iss=https%3A%2F%2Fauth.example%2F"]) {
      const v = judge(callback(q));
      assert.equal(v.taken, false, q);
      assert.match(v.message, /carries no state, so it may not come from this login; it was not used\.$/);
    }
  });

  it("refuses a pasted address without state, saying the bare code would do; takes a pasted bare code", () => {
    const v = judge(pasted("http://127.0.0.1:1/callback?code=abc"));
    assert.equal(v.taken, false);
    assert.match(v.message, /paste just the code to use it anyway/);
    assert.equal(judge(pasted("abc")).taken, true);
  });

  it("takes the callback answer with this login's state, and an error answer with it", () => {
    assert.deepEqual(judge(callback("code=c&state=s1&iss=https%3A%2F%2Fauth.example")), {
      taken: true,
      message: "hermit received the answer; the terminal says how the login went.",
    });
    assert.equal(judge(callback("error=access_denied&state=s1")).taken, true);
  });

  it("refuses another state, another issuer, and anything before the login has started", () => {
    assert.match(judge(callback("code=c&state=s2")).message, /belongs to another login attempt/);
    assert.match(
      judgeAnswer(callback("code=c&state=s1"), undefined, false).message,
      /belongs to another login attempt/,
    );
    const v = judge(callback("code=c&state=s1&iss=http%3A%2F%2F127.0.0.1%3A9%2F"));
    assert.equal(v.taken, false);
    assert.equal(v.message, `This answer comes from http://127.0.0.1:9/, not ${AS}; it was not used.`);
  });

  it("uses only the first answer: later ones, right or wrong, are told so", () => {
    const v = judge(callback("code=c2&state=s1"), awaited, true);
    assert.deepEqual(v, { taken: false, message: "Not used: this login already has its answer." });
    assert.equal(judge(pasted("abc"), awaited, true).taken, false);
  });

  it("requires iss when the authorization server promises it, except on a pasted bare code", () => {
    const promised = { ...awaited, issRequired: true };
    for (const a of [callback("code=c&state=s1"), pasted("http://127.0.0.1:1/callback?code=c&state=s1")]) {
      const v = judge(a, promised);
      assert.equal(v.taken, false);
      assert.match(
        v.message,
        /does not name its authorization server \(iss\), which https:\/\/auth\.example\/ always does/,
      );
    }
    assert.equal(judge(callback("code=c&state=s1&iss=https%3A%2F%2Fauth.example%2F"), promised).taken, true);
    assert.equal(judge(pasted("c"), promised).taken, true);
    assert.equal(judge(callback("code=c&state=s1"), awaited).taken, true, "not promised: iss may be missing");
  });
});
