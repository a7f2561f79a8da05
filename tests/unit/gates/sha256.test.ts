/** The gates' own SHA-256 (plain JavaScript, gates/sha256.ts) gives the runtime's digest. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { sha256Text } from "../../../src/gates/sha256.ts";

describe("gates/sha256", () => {
  it("known vectors", () => {
    assert.equal(sha256Text(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    assert.equal(sha256Text("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });

  it("equals node:crypto's across every padding length and for text beyond ASCII", () => {
    const inputs = ["héllo \u{1F600}", JSON.stringify("\ud800x"), "a".repeat(1000)];
    for (let n = 0; n < 200; n++) inputs.push("x".repeat(n) + "é");
    for (const s of inputs) {
      assert.equal(
        sha256Text(s),
        createHash("sha256").update(s).digest("hex"),
        JSON.stringify(s).slice(0, 30),
      );
    }
  });
});
