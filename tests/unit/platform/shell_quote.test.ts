/** The command lines hermit prints for a person to paste: paths quoted only when they need it. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { NeedsLogin } from "../../../src/mcp/oauth/errors.ts";
import { shellQuote } from "../../../src/platform/shell_quote.ts";

describe("shellQuote", () => {
  it("leaves a plain path alone and quotes one with spaces or quotes", () => {
    assert.equal(shellQuote("/home/ada/adapters/notes"), "/home/ada/adapters/notes");
    assert.equal(shellQuote("my adapter"), "'my adapter'");
    assert.equal(shellQuote("it's"), `'it'\\''s'`);
    assert.equal(shellQuote("$HOME"), "'$HOME'");
  });

  it("never lets a path be taken for an option", () => {
    assert.equal(shellQuote("-rf"), "./-rf");
    assert.equal(shellQuote("-my dir"), "'./-my dir'");
  });

  it("is what the 'needs a login' line uses for the adapter directory", () => {
    assert.match(new NeedsLogin("remote", "/a b/notes").message, /run 'hermit login '\/a b\/notes' remote'$/);
    assert.match(new NeedsLogin("remote", "-notes").message, /run 'hermit login \.\/-notes remote'$/);
  });
});
