/**
 * `src/gates/cleartext.ts`: which remote upstreams would send credentials over plain http to
 * another host. The e2e side (check, login and serve, with a server that sees what arrives) is
 * tests/e2e/remote_cleartext.test.ts.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { cleartextRefusal } from "../../../src/gates/cleartext.ts";

const entry = (over: { url?: string; headers?: Record<string, string>; auth?: "oauth" }) => ({
  name: "remote",
  url: over.url ?? "http://10.0.0.5/mcp",
  headers: over.headers ?? {},
  auth: over.auth,
});
const judge = (over: Parameters<typeof entry>[0], runUrl = over.url ?? "http://10.0.0.5/mcp") =>
  cleartextRefusal(entry(over), runUrl, "/a/hermit.yaml");

describe("cleartextRefusal", () => {
  it("refuses each kind of credential over http off loopback, in one line naming file, field and fix", () => {
    assert.equal(
      judge({ auth: "oauth", headers: { Authorization: "Bearer x", "X-Team": "t" } }),
      "refused: mcp_servers.remote: its url http://10.0.0.5/mcp (/a/hermit.yaml) is plain http to another " +
        "host, so its OAuth access token and headers (Authorization, X-Team) would cross the network in " +
        "cleartext; use https:// (plain http only to loopback: 127.0.0.1, ::1, localhost, e.g. through an " +
        "SSH tunnel)",
    );
    assert.match(judge({ url: "http://u:p@10.0.0.5/mcp" })!, /so the credentials in its URL would/);
    const query = "http://10.0.0.5/mcp?api_key=${env:KEY}";
    assert.match(
      judge({ url: query }, "http://10.0.0.5/mcp?api_key=abc")!,
      /so the \$\{…\} values in its query/,
    );
    // the secret in the query is not repeated in the message
    assert.doesNotMatch(judge({ url: query }, "http://10.0.0.5/mcp?api_key=abc")!, /abc/);
    // judged where it runs: a placeholder that becomes another host
    assert.ok(judge({ url: "${env:MCP_URL}", auth: "oauth" }, "http://mcp.internal:8080/mcp"));
    for (
      const host of ["0.0.0.0", "[::ffff:127.0.0.1]", "127.0.0.1.nip.io", "localhost.example", "[fd00::2]"]
    ) {
      assert.ok(judge({ url: `http://${host}/mcp`, auth: "oauth" }), host);
    }
  });

  it("passes https, loopback, and plain http with nothing secret to send", () => {
    const oauth = { auth: "oauth" as const, headers: { Authorization: "Bearer x" } };
    for (
      const url of [
        "https://10.0.0.5/mcp",
        "http://127.0.0.1:9/mcp",
        "http://127.4.5.6/",
        "http://[::1]:9/",
        "http://localhost:9/",
      ]
    ) {
      assert.equal(judge({ ...oauth, url }), undefined, url);
    }
    assert.equal(judge({ url: "http://10.0.0.5/mcp?mode=fast" }), undefined);
    assert.equal(judge({ url: "http://${env:HOST}/mcp" }, "http://10.0.0.5/mcp"), undefined);
    assert.equal(judge({}, "not a url"), undefined); // connecting says what is wrong with it
  });
});
