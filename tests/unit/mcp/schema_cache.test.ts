/**
 * The schema cache: fingerprint, TTL semantics (ttlMs 0 = no hint), write-through, file modes,
 * atomic writes, and where it lives.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseManifest } from "../../../src/manifest/load.ts";
import type { Upstream } from "../../../src/manifest/types.ts";
import {
  defaultSchemaCache,
  expiresAt,
  fingerprint,
  SchemaCache,
  ttlHint,
} from "../../../src/mcp/schema_cache.ts";
import { tempDir } from "../../helpers/tmp.ts";

function upstream(yaml: string): Upstream {
  const text = `name: t\nexports: { tools: [a] }\nmcp_servers:\n  s:\n${
    yaml.split("\n").map((l) => "    " + l).join("\n")
  }\n`;
  return parseManifest(text, "/x/hermit.yaml", "/x").manifest.upstreams.s;
}

const tool = (name: string) => ({ name, inputSchema: { type: "object" as const } });

describe("fingerprint", () => {
  it("is 16 hex characters of the connection-defining config", () => {
    assert.match(fingerprint(upstream("command: npx\nargs: [-y, pkg]")), /^[0-9a-f]{16}$/);
  });
  it("ignores credentials and the order of filters", () => {
    const a = upstream("command: npx\nargs: [-y, pkg]\nenv: { TOKEN: one }\ntools: { include: [x, y] }");
    const b = upstream("command: npx\nargs: [-y, pkg]\nenv: { TOKEN: two }\ntools: { include: [y, x] }");
    assert.equal(fingerprint(a), fingerprint(b));
    const h1 = upstream("url: https://e.example/mcp\nheaders: { Authorization: Bearer a }");
    const h2 = upstream("url: https://e.example/mcp\nheaders: { Authorization: Bearer b }");
    assert.equal(fingerprint(h1), fingerprint(h2));
  });
  it("changes with command, args, url, transport and filters", () => {
    const base = fingerprint(upstream("command: npx\nargs: [-y, pkg]"));
    for (
      const other of [
        "command: npm\nargs: [-y, pkg]",
        "command: npx\nargs: [-y, pkg@2]",
        "command: npx\nargs: [-y, pkg]\ntools: { exclude: [z] }",
      ]
    ) {
      assert.notEqual(fingerprint(upstream(other)), base, other);
    }
    assert.notEqual(
      fingerprint(upstream("url: https://e.example/mcp")),
      fingerprint(upstream("url: https://e.example/mcp\ntransport: sse")),
    );
  });
  it("a stdio server's includes where it runs: two adapters' `node server.mjs` are two servers", () => {
    const local = upstream("command: node\nargs: [server.mjs]");
    assert.notEqual(fingerprint(local, "/adapters/a"), fingerprint(local, "/adapters/b"));
    assert.equal(fingerprint(local, "/adapters/a"), fingerprint(local, "/adapters/a/"));
    assert.notEqual(
      fingerprint(local, "/adapters/a"),
      fingerprint(upstream("command: node\nargs: [server.mjs]\ncwd: sub"), "/adapters/a"),
    );
    const remote = upstream("url: https://e.example/mcp");
    assert.equal(
      fingerprint(remote, "/adapters/a"),
      fingerprint(remote, "/adapters/b"),
      "a URL is one server",
    );
  });
});

describe("SchemaCache", () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());
  let now = 1_000_000;
  const cache = new SchemaCache(path.join(tmp.path, "cache"), () => now);

  it("ttlHint: only a positive number is a hint", () => {
    assert.equal(ttlHint(0), undefined);
    assert.equal(ttlHint(-5), undefined);
    assert.equal(ttlHint("60"), undefined);
    assert.equal(ttlHint(Number.NaN), undefined);
    assert.equal(ttlHint(60_000), 60_000);
    assert.equal(ttlHint(1), 1000, "under a second counts as a second");
    assert.equal(ttlHint(999.5), 1000);
  });

  it("an entry without a TTL (or with ttlMs 0) never expires", () => {
    const u = upstream("command: a");
    cache.put(u, { tools: [tool("x")], ttlMs: 0 });
    now += 10 * 365 * 24 * 3600 * 1000;
    assert.deepEqual(cache.get(u)?.tools.map((t) => t.name), ["x"]);
    assert.equal(cache.get(u)?.ttl_ms, undefined);
  });

  it("an entry with a TTL is fresh until it runs out", () => {
    const u = upstream("command: b");
    cache.put(u, { tools: [tool("y")], ttlMs: 5000 });
    now += 4999;
    assert.ok(cache.get(u));
    now += 1;
    assert.equal(cache.get(u), undefined);
    assert.ok(cache.read(u), "still readable, just not fresh");
  });

  it("does not rewrite an identical entry without a TTL; rewrites one with a TTL", () => {
    const u = upstream("command: c");
    const first = cache.put(u, { tools: [tool("z")] });
    now += 1000;
    assert.equal(cache.put(u, { tools: [tool("z")] }).written_at, first.written_at);
    const v = upstream("command: d");
    const a = cache.put(v, { tools: [tool("z")], ttlMs: 100 });
    now += 50;
    assert.notEqual(cache.put(v, { tools: [tool("z")], ttlMs: 100 }).written_at, a.written_at);
  });

  it("keeps its files private: 0600 in a 0700 directory", () => {
    const u = upstream("command: e");
    const e = cache.put(u, { tools: [tool("q")] });
    assert.equal(statSync(path.join(tmp.path, "cache")).mode & 0o777, 0o700);
    assert.equal(statSync(path.join(tmp.path, "cache", `${e.fingerprint}.json`)).mode & 0o777, 0o600);
  });

  it("an entry for another config (a different fingerprint) is not used", () => {
    const u = upstream("command: f\nargs: [one]");
    cache.put(u, { tools: [tool("w")] });
    assert.equal(cache.get(upstream("command: f\nargs: [two]")), undefined);
  });
});

describe("SchemaCache writes", () => {
  it("a write that fails leaves no temporary file and is not an error (the cache is a cache)", () => {
    const tmp = tempDir();
    try {
      const cache = new SchemaCache(path.join(tmp.path, "cache"));
      const u = upstream("command: g");
      // the entry's path is a non-empty directory: the rename cannot replace it
      const blocked = path.join(cache.dir, `${fingerprint(u)}.json`);
      mkdirSync(blocked, { recursive: true });
      writeFileSync(path.join(blocked, "inside"), "");
      assert.deepEqual(cache.put(u, { tools: [tool("v")] }).tools.map((t) => t.name), ["v"]);
      assert.deepEqual(readdirSync(cache.dir), [`${fingerprint(u)}.json`]);
    } finally {
      tmp.cleanup();
    }
  });

  it("expiresAt: a listing's time plus its TTL (a second at least); no TTL, no expiry", () => {
    assert.equal(expiresAt(1000, 5000), 6000);
    assert.equal(expiresAt(1000, 500), 2000, "an entry stored with ttl_ms under a second too");
    assert.equal(expiresAt(1000, undefined), undefined);
  });

  it("the default cache is in the state dir of the environment it is given", () => {
    const tmp = tempDir();
    try {
      const cache = defaultSchemaCache("/x", "linux", { HOME: tmp.path }); // not hermit's own HOME
      assert.equal(cache.dir, path.join(tmp.path, ".local", "state", "hermit", "schema-cache"));
    } finally {
      tmp.cleanup();
    }
  });
});
