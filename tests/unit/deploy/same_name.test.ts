/**
 * Two adapter directories whose manifests have the same `name` are two adapters: the record keeps
 * the directory each name was deployed from, so deploying or removing the other one is a conflict
 * (exit 2, both directories named, nothing written) instead of repointing or removing the first
 * one's entries. `--force` takes the name over (an adapter that moved); a record from before
 * directories were kept adopts the first directory deployed.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { HermitError } from "../../../src/errors.ts";
import { deploy, GOLDEN_ADAPTER, sandbox, snapshot } from "../../helpers/deploy.ts";

async function rejects(p: Promise<unknown>, re: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof HermitError, String(err));
    assert.equal(err.exitCode, 2, err.message);
    assert.match(err.message, re);
    return true;
  });
}

describe("two adapters with the same name", () => {
  it("the second is a conflict naming both directories, for deploy and --remove alike", async () => {
    const s = sandbox();
    try {
      const x = path.join(s.root, "x", "tools");
      const y = path.join(s.root, "y", "tools");
      cpSync(GOLDEN_ADAPTER, x, { recursive: true });
      cpSync(GOLDEN_ADAPTER, y, { recursive: true });
      await deploy(s, { adapter: x, hosts: ["claude"] });
      const before = snapshot(s.project, []);
      const conflict = new RegExp(
        `^the adapter 'notes' here was deployed from ${x}; ${y} has the same name: rename one of them`,
      );
      await rejects(deploy(s, { adapter: y, hosts: ["claude"] }), conflict);
      await rejects(deploy(s, { adapter: y, remove: true }), conflict);
      const after = snapshot(s.project, []);
      assert.deepEqual([...after.keys()], [...before.keys()]);
      for (const [rel, bytes] of before) assert.ok(bytes.equals(after.get(rel)!), `${rel} as it was`);
      assert.match(
        readFileSync(path.join(s.project, ".mcp.json"), "utf8"),
        new RegExp(x.replace(/\//g, "\\/")),
      );

      // --force takes the name over (the adapter moved); then x is the other one
      await deploy(s, { adapter: y, hosts: ["claude"], force: true });
      assert.match(
        readFileSync(path.join(s.project, ".mcp.json"), "utf8"),
        new RegExp(y.replace(/\//g, "\\/")),
      );
      await rejects(
        deploy(s, { adapter: x, remove: true }),
        /was deployed from \S+y\/tools; \S+x\/tools has/,
      );
      await deploy(s, { adapter: y, remove: true });
      assert.deepEqual([...snapshot(s.project, []).keys()], []);
    } finally {
      s.cleanup();
    }
  });

  it("a record without directories adopts the first one deployed", async () => {
    const s = sandbox();
    try {
      await deploy(s, { hosts: ["claude"] });
      const file = path.join(s.project, ".hermit", "deployed.json");
      const rec = JSON.parse(readFileSync(file, "utf8"));
      delete rec.adapters;
      writeFileSync(file, JSON.stringify(rec));
      assert.deepEqual(
        (await deploy(s, { hosts: ["claude"] })).changed,
        [],
      );
      assert.deepEqual(JSON.parse(readFileSync(file, "utf8")).adapters, { notes: GOLDEN_ADAPTER });
      await deploy(s, { hosts: ["claude"], remove: true });
      assert.deepEqual([...snapshot(s.project, []).keys()], []);
    } finally {
      s.cleanup();
    }
  });
});
