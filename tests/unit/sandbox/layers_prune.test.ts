/**
 * Reclaiming package-cache layers (src/sandbox/layers_prune.ts): an entry's layers unused for 30
 * days, or whose adapter directory is gone, are removed at most once a day; a layer a running
 * start holds, and the claiming entry's own, stay; a claim records whose layers they are.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { claimLayers, layersRoot } from "../../../src/sandbox/layers.ts";
import {
  LAYER_MAX_AGE_MS,
  PRUNE_EVERY_MS,
  pruneLayers,
  staleLayers,
} from "../../../src/sandbox/layers_prune.ts";
import { tryLock } from "../../../src/platform/lock.ts";
import { tempDir } from "../../helpers/tmp.ts";

const DAY = 24 * 3600_000;

describe("pruning package-cache layers", () => {
  it("stale: unused for 30 days, or its adapter gone; a layer without a record goes by age alone", () => {
    const now = 100 * DAY;
    const exists = (d: string) => d !== "/gone";
    const stale = staleLayers(
      [
        { name: "old", lastUse: now - LAYER_MAX_AGE_MS - 1, adapterDir: "/ad" },
        { name: "fresh", lastUse: now - DAY, adapterDir: "/ad" },
        { name: "gone", lastUse: now - DAY, adapterDir: "/gone" },
        { name: "unrecorded", lastUse: now - DAY },
        { name: "unrecorded-old", lastUse: now - 40 * DAY },
      ],
      now,
      exists,
    );
    assert.deepEqual(stale, ["old", "gone", "unrecorded-old"]);
  });

  it("removes the stale ones but a held one and the claimer's own, once a day", async () => {
    const tmp = tempDir();
    try {
      const root = path.join(tmp.path, "layers");
      const adapter = path.join(tmp.path, "adapter");
      mkdirSync(adapter);
      const now = Date.now();
      const make = (name: string, ageDays: number, adapterDir?: string) => {
        const dir = path.join(root, name);
        mkdirSync(path.join(dir, "0", "npm-x", "upper", "_npx"), { recursive: true });
        writeFileSync(path.join(dir, "0", "npm-x", "upper", "_npx", "pkg.js"), "x");
        const at = (now - ageDays * DAY) / 1000;
        if (adapterDir !== undefined) {
          writeFileSync(path.join(dir, "owner.json"), JSON.stringify({ adapterDir, label: "x" }));
          utimesSync(path.join(dir, "owner.json"), at, at);
        }
        utimesSync(dir, at, at);
        return dir;
      };
      make("old", 40, adapter);
      make("fresh", 1, adapter);
      make("gone", 1, path.join(tmp.path, "no-such-adapter"));
      make("unrecorded", 45);
      writeFileSync(path.join(root, "stray-file"), "not a layer");
      utimesSync(path.join(root, "stray-file"), (now - 90 * DAY) / 1000, (now - 90 * DAY) / 1000);
      const held = make("held", 40, adapter);
      const own = make("own", 40, adapter);
      const lock = await tryLock(path.join(held, "3.lock"));
      assert.ok(lock);
      try {
        const removed = await pruneLayers(root, own, 16, now);
        assert.deepEqual(removed.sort(), ["gone", "old", "unrecorded"]);
        assert.deepEqual(
          readdirSync(root).filter((n) => !n.startsWith(".")).sort(),
          ["fresh", "held", "own", "stray-file"],
          "what is not a layer directory is left alone",
        );
        assert.deepEqual(
          readdirSync(root).filter((n) => n.startsWith(".removed")),
          [],
          "set aside, then removed",
        );
        make("later", 40, adapter);
        assert.deepEqual(await pruneLayers(root, own, 16, now + DAY / 2), [], "not twice in a day");
        assert.ok(existsSync(path.join(root, "later")));
        assert.deepEqual(await pruneLayers(root, own, 16, now + PRUNE_EVERY_MS + 1), ["later"]);
      } finally {
        lock.release();
      }
      assert.ok(existsSync(held), "a held layer stays");
    } finally {
      tmp.cleanup();
    }
  });

  it("a claim records whose layers they are", async () => {
    const tmp = tempDir();
    try {
      const caches = [{ manager: "npm" as const, path: "/h/.npm" }];
      const claim = await claimLayers(tmp.path, "/ad", "mcp_servers.web", caches);
      const [dir] = readdirSync(layersRoot(tmp.path)).filter((n) => !n.startsWith("."));
      const owner = JSON.parse(readFileSync(path.join(layersRoot(tmp.path), dir, "owner.json"), "utf8"));
      assert.deepEqual(owner, { adapterDir: "/ad", label: "mcp_servers.web" });
      claim.release();
    } finally {
      tmp.cleanup();
    }
  });
});
