/**
 * Where an entry's own layers over the package caches live: one directory per adapter and entry
 * (kept across starts), one layer per cache; a path the overlay's options cannot carry is left
 * to be written in place.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { claimLayers, layersFor, layersRoot } from "../../../src/sandbox/layers.ts";
import { tempDir } from "../../helpers/tmp.ts";

describe("layers over the package caches", () => {
  const caches = [
    { manager: "npm" as const, path: "/h/.npm" },
    { manager: "uv" as const, path: "/h/.cache/uv" },
  ];

  it("one per cache, under a directory of the entry's own, the same at every start", () => {
    const a = layersFor("/s", "/ad", "mcp_servers.web", caches);
    assert.deepEqual(a.map((l) => l.path), ["/h/.npm", "/h/.cache/uv"]);
    for (const l of a) {
      assert.ok(l.upper.startsWith(layersRoot("/s") + "/"), l.upper);
      assert.equal(l.work, l.upper.replace(/upper$/, "work"));
    }
    assert.deepEqual(layersFor("/s", "/ad", "mcp_servers.web", caches), a);
    const other = layersFor("/s", "/ad", "tools.fetch", caches);
    assert.notEqual(
      other[0].upper.split("/").at(-4),
      a[0].upper.split("/").at(-4),
      "another entry, another layer",
    );
    assert.notEqual(layersFor("/s", "/other", "mcp_servers.web", caches)[0].upper, a[0].upper);
  });

  it("a cache path with ',', ':' or '\\\\' (which the overlay's options would split) is written in place", () => {
    const odd = [{ manager: "npm" as const, path: "/h/a,b" }, { manager: "bun" as const, path: "/h/c:d" }];
    assert.deepEqual(layersFor("/s", "/ad", "x", [...odd, ...caches]).map((l) => l.path), [
      "/h/.npm",
      "/h/.cache/uv",
    ]);
  });

  it("a start claims a slot no running start of the entry holds (one overlay per upper directory)", async () => {
    const tmp = tempDir();
    try {
      const one = await claimLayers(tmp.path, "/ad", "mcp_servers.web", caches);
      const two = await claimLayers(tmp.path, "/ad", "mcp_servers.web", caches);
      assert.equal(one.layers.length, 2);
      assert.notEqual(one.layers[0].upper, two.layers[0].upper, "two starts at once: two slots");
      one.release();
      const three = await claimLayers(tmp.path, "/ad", "mcp_servers.web", caches);
      assert.equal(
        three.layers[0].upper,
        one.layers[0].upper,
        "a released slot is taken again (its downloads kept)",
      );
      two.release();
      three.release();
      assert.deepEqual((await claimLayers(tmp.path, "/ad", "x", [])).layers, []);
    } finally {
      tmp.cleanup();
    }
  });
});
