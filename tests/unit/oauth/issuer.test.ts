/**
 * Issuer comparison (`sameIssuer` for RFC 9207's `iss`, `discoveredAs` for RFC 8414 §3.3): equal
 * after RFC 3986 normalisation (scheme and host case, default port, empty path, percent-encoding),
 * and nothing looser — except that discovery takes one terminating "/" on a path, which RFC 8414
 * §3.1 removes before looking up the metadata.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { sameIssuer } from "../../../src/mcp/oauth/client.ts";
import { discoveredAs } from "../../../src/mcp/oauth/discovery.ts";

const SAME: [string, string][] = [
  ["https://AS.Example.com/tenant", "https://as.example.com/tenant"],
  ["HTTPS://as.example.com", "https://as.example.com/"],
  ["https://as.example.com:443/t", "https://as.example.com/t"],
  ["http://127.0.0.1:80", "http://127.0.0.1/"],
  ["https://as.example.com/a/./b/../t", "https://as.example.com/a/t"],
  ["https://as.example.com/%7Euser", "https://as.example.com/~user"],
  ["https://as.example.com/a%2fb", "https://as.example.com/a%2Fb"],
  ["https://[0:0:0:0:0:0:0:1]:8443/", "https://[::1]:8443"],
];

const DIFFERENT: [string, string][] = [
  ["https://as.example.com/t//", "https://as.example.com/t"],
  ["https://as.example.com/T", "https://as.example.com/t"],
  ["https://as.example.com:8443", "https://as.example.com"],
  ["http://as.example.com", "https://as.example.com"],
  ["https://as.example.com/a%2Fb", "https://as.example.com/a/b"],
  ["https://as.example.com/?x=1", "https://as.example.com/"],
  ["https://as.example.com.evil.example", "https://as.example.com"],
  ["https://user@as.example.com", "https://as.example.com"],
  ["not a url", "Not a URL"],
];

describe("sameIssuer (iss, stored logins)", () => {
  it("takes issuers equal after RFC 3986 normalisation", () => {
    for (const [a, b] of SAME) {
      assert.ok(sameIssuer(a, b), `${a} = ${b}`);
      assert.ok(sameIssuer(b, a), `${b} = ${a}`);
    }
  });

  it("tells apart what normalisation does not make equal, a trailing slash on a path included", () => {
    for (const [a, b] of [...DIFFERENT, ["https://as.example.com/t/", "https://as.example.com/t"]]) {
      assert.ok(!sameIssuer(a, b), `${a} ≠ ${b}`);
      assert.ok(!sameIssuer(b, a), `${b} ≠ ${a}`);
    }
  });
});

describe("discoveredAs (metadata issuer against where it was found)", () => {
  it("takes the same, and one terminating slash on a path either way", () => {
    for (
      const [a, b] of [
        ...SAME,
        ["https://as.example.com/t/", "https://as.example.com/t"],
      ]
    ) {
      assert.ok(discoveredAs(a, b), `${a} ~ ${b}`);
      assert.ok(discoveredAs(b, a), `${b} ~ ${a}`);
    }
  });

  it("nothing looser", () => {
    // "/t//" is looked up at …/t/, "/t/" at …/t: two documents
    for (const [a, b] of [...DIFFERENT, ["https://as.example.com/t//", "https://as.example.com/t/"]]) {
      assert.ok(!discoveredAs(a, b), `${a} ≁ ${b}`);
      assert.ok(!discoveredAs(b, a), `${b} ≁ ${a}`);
    }
  });
});
