/** `src/cli/options.ts`: the positive-seconds parser `login`, `watchdog` and `check` share. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { HermitError } from "../../../src/errors.ts";
import { positiveSeconds } from "../../../src/cli/options.ts";

describe("positiveSeconds", () => {
  const parse = positiveSeconds("--timeout");
  it("takes positive numbers, fractions too", () => {
    assert.equal(parse("90"), 90);
    assert.equal(parse("0.5"), 0.5);
  });
  it("anything else is a usage error naming the flag and the value", () => {
    for (const v of ["0", "-1", "soon", "", "Infinity"]) {
      assert.throws(
        () => parse(v),
        (err: unknown) =>
          err instanceof HermitError && err.exitCode === 2 &&
          err.message === `--timeout must be a positive number of seconds, got '${v}'`,
        v,
      );
    }
  });
});
