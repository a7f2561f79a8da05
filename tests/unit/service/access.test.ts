/**
 * `src/service/access.ts`: the `--serve-url` and `--token-file` a relay is given, the reason a
 * service gives for a 401 or 403, and the one line the user gets for it. The start-up probe runs against a
 * real service in tests/e2e/relay_faults.test.ts.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { HermitError } from "../../../src/errors.ts";
import { parseServeUrl, readToken, reasonIn, refusalMessage } from "../../../src/service/access.ts";
import { tempDir } from "../../helpers/tmp.ts";

const usage = (message: RegExp) => (err: unknown) =>
  err instanceof HermitError && err.exitCode === 2 && message.test(err.message);

describe("parseServeUrl", () => {
  it("takes http and https URLs", () => {
    assert.equal(parseServeUrl("http://127.0.0.1:8765/mcp").href, "http://127.0.0.1:8765/mcp");
    assert.equal(parseServeUrl("https://mcp.example.com/mcp").origin, "https://mcp.example.com");
  });

  it("refuses what is not a URL, other schemes, and credentials in the URL", () => {
    assert.throws(() => parseServeUrl("127.0.0.1:8765"), usage(/is not a URL; e\.g\. --serve-url http/));
    assert.throws(() => parseServeUrl("nope"), usage(/'nope' is not a URL/));
    assert.throws(
      () => parseServeUrl("ftp://h/mcp"),
      usage(/must be an http:\/\/ or https:\/\/ URL, got 'ftp:\/\/h\/mcp'/),
    );
    assert.throws(
      () => parseServeUrl("http://u:p@h/mcp"),
      usage(/must not carry credentials; the token comes from HERMIT_SERVE_TOKEN/),
    );
  });
});

describe("parseServeUrl with a token to send", () => {
  it("refuses plain http to another host, naming who would send the token and the fix", () => {
    for (const url of ["http://10.0.0.5:8080/mcp", "http://mcp.example.com/mcp", "http://0.0.0.0:1/mcp"]) {
      assert.throws(
        () => parseServeUrl(url, "this relay"),
        usage(
          /^--serve-url http:\S+ is plain http to another host, so this relay would send the token across the network in cleartext; use https:\/\/ .*ssh -L\)$/,
        ),
        url,
      );
      assert.equal(parseServeUrl(url).href, new URL(url).href); // no token: nothing to leak
    }
  });

  it("takes https anywhere and http on loopback", () => {
    for (
      const url of [
        "https://10.0.0.5/mcp",
        "http://127.0.0.1:1/mcp",
        "http://[::1]:1/mcp",
        "http://localhost:1/",
      ]
    ) {
      assert.equal(parseServeUrl(url, "hosts").href, new URL(url).href);
    }
  });
});

describe("readToken", () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());

  it("reads and trims the token", () => {
    const file = path.join(tmp.path, "t");
    writeFileSync(file, `  ${"x".repeat(20)}\n`);
    assert.equal(readToken(file), "x".repeat(20));
  });

  it("a missing file or a short token is a usage error naming the file", () => {
    const missing = path.join(tmp.path, "missing");
    assert.throws(
      () => readToken(missing),
      usage(new RegExp(`^--token-file ${missing}: cannot be read \\(ENOENT\\)$`)),
    );
    const short = path.join(tmp.path, "short");
    writeFileSync(short, "\n");
    assert.throws(() => readToken(short), usage(/: the token must be at least 16 characters$/));
  });
});

describe("reasonIn and refusalMessage", () => {
  const body = JSON.stringify({
    jsonrpc: "2.0",
    error: { code: -32000, message: "Unauthorized: wrong token" },
    id: null,
  });

  it("the reason is the JSON-RPC error's message in the body, else the body's first line", () => {
    assert.equal(reasonIn(body), "Unauthorized: wrong token");
    assert.equal(reasonIn("Forbidden\nmore"), "Forbidden");
    assert.equal(reasonIn("{not json"), "{not json");
  });

  it("names the service, the reason and the fix", () => {
    const url = new URL("http://10.0.0.5:8080/mcp");
    const wrong = { status: 401 as const, detail: "Unauthorized: wrong token" };
    assert.equal(
      refusalMessage("memory", url, wrong, true),
      "the memory service at http://10.0.0.5:8080 refused the token (Unauthorized: wrong token); set HERMIT_SERVE_TOKEN or --token-file to the token the service was started with",
    );
    assert.match(
      refusalMessage("memory", url, wrong, false),
      /wants a token .*; set HERMIT_SERVE_TOKEN or pass --token-file FILE$/,
    );
    assert.match(
      refusalMessage(
        "memory",
        url,
        { status: 403, detail: "Forbidden: Host '10.0.0.5:8080' is not allowed" },
        true,
      ),
      /refused this relay \(Forbidden: Host '10\.0\.0\.5:8080' is not allowed\); if it is a hermit service, start it with --allowed-host 10\.0\.0\.5$/,
    );
  });
});
