/**
 * Golden files per host and scope: an input tree with comments and existing entries
 * (tests/fixtures/hosts/<host>/<scope>/before) is deployed into, and every file must then equal
 * the golden tree (`after`, with the adapter path written as ${ADAPTER}); a second deploy changes
 * nothing; `--remove` gives back the input byte for byte, with no file or directory left over.
 * `UPDATE_GOLDEN=1` rewrites the `after` trees (review the diff).
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { HOST_IDS } from "../../../src/hosts/types.ts";
import {
  copyTree,
  deploy,
  dirsUnder,
  GOLDEN_ADAPTER,
  HOST_FIXTURES,
  sandbox,
  snapshot,
} from "../../helpers/deploy.ts";

const ADAPTER = "${ADAPTER}";
const normalize = (b: Buffer) => b.toString("utf8").split(GOLDEN_ADAPTER).join(ADAPTER);

for (const host of HOST_IDS) {
  for (const scope of ["project", "user"] as const) {
    const dir = path.join(HOST_FIXTURES, host, scope);
    describe(`${host} ${scope} scope`, { skip: existsSync(dir) ? false : "no fixture" }, () => {
      const s = sandbox();
      after(s.cleanup);
      const root = scope === "project" ? s.project : s.home;

      it("writes the golden files, then a second run changes nothing, then --remove restores the input", async () => {
        copyTree(path.join(dir, "before"), root);
        const before = snapshot(root);
        const dirsBefore = dirsUnder(root);
        const report = await deploy(s, { scope, hosts: [host] });
        assert.ok(report.changed.length > 0);
        const written = snapshot(root);
        if (process.env.UPDATE_GOLDEN) {
          rmSync(path.join(dir, "after"), { recursive: true, force: true });
          for (const [rel, bytes] of written) {
            const to = path.join(dir, "after", rel);
            mkdirSync(path.dirname(to), { recursive: true });
            writeFileSync(to, normalize(bytes));
          }
        }
        const golden = snapshot(path.join(dir, "after"));
        assert.deepEqual([...written.keys()], [...golden.keys()], "the files written");
        for (const [rel, bytes] of golden) {
          assert.equal(normalize(written.get(rel)!), bytes.toString("utf8"), rel);
        }

        const again = await deploy(s, { scope, hosts: [host] });
        assert.deepEqual(again.changed, [], "a second deploy is a no-op");
        assert.ok(again.hosts[0].items.every((i) => i.status === "unchanged"));

        const removed = await deploy(s, { scope, hosts: [host], remove: true });
        assert.ok(
          removed.hosts[0].items.every((i) => i.status === "removed"),
          JSON.stringify(removed.hosts[0].items),
        );
        const restored = snapshot(root);
        assert.deepEqual([...restored.keys()], [...before.keys()]);
        for (const [rel, bytes] of before) {
          assert.ok(bytes.equals(restored.get(rel)!), `${rel} restored byte for byte`);
        }
        assert.deepEqual(dirsUnder(root).filter((d) => !d.startsWith(".hermit")), dirsBefore);
        if (scope === "project") {
          assert.equal(existsSync(path.join(root, ".hermit")), false, "no record left");
        }
      });
    });
  }
}
