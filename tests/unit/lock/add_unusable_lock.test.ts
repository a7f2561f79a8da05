/**
 * `hermit add` into an adapter whose hermit.lock exists but cannot be used (a merge conflict, a
 * hand-edited definition, a FIFO): refused before anything is written, exit 3, one line naming the
 * lock and the way out — never a re-lock of every server (which would approve, unseen, tools that
 * changed since the last lock). Only a missing lock means "lock everything". Run from the sources
 * under this test's runtime.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { describe, it } from "node:test";
import { HermitError } from "../../../src/errors.ts";
import { buildLock } from "../../../src/lock/build.ts";
import { refuseUnusableLock } from "../../../src/lock/commit.ts";
import { renderLock } from "../../../src/lock/file.ts";
import type { Upstream } from "../../../src/manifest/types.ts";
import { runHermit } from "../../helpers/hermit.ts";
import { tempDir } from "../../helpers/tmp.ts";

const MANIFEST = `name: mine
exports:
  tools: [hello]
tools:
  hello:
    description: Says hello
    run: [echo, hi]
`;
const LOCK = renderLock(buildLock([{
  upstream: { name: "web", kind: "stdio", command: "node", args: ["s.mjs"] } as Upstream,
  tools: [{ raw: "fetch", exported: "fetch", tool: { name: "fetch", description: "Fetches a page." } }],
}]));
const deno = (globalThis as unknown as { Deno?: unknown }).Deno;

describe("refuseUnusableLock", () => {
  it("an unusable lock: one line naming it and the way out, exit 3; none or one: nothing said", () => {
    assert.throws(
      () =>
        refuseUnusableLock({ kind: "invalid", why: "not valid YAML: x" }, "A/hermit.lock", "hermit lock A"),
      (err: Error) => {
        assert.ok(err instanceof HermitError, String(err));
        assert.equal(err.exitCode, 3);
        assert.equal(
          err.message,
          "A/hermit.lock cannot be read (not valid YAML: x): fix it or run 'hermit lock A' first; nothing was changed",
        );
        return true;
      },
    );
    refuseUnusableLock({ kind: "none" }, "A/hermit.lock", "hermit lock A");
    refuseUnusableLock({ kind: "ok", lock: { format: 1, servers: {} } }, "A/hermit.lock", "hermit lock A");
  });
});

describe("hermit add into an adapter whose hermit.lock cannot be used", {
  skip: process.platform === "win32",
}, () => {
  const cases: [string, (lock: string) => void, RegExp][] = [
    [
      "a merge conflict in it",
      (lock) => writeFileSync(lock, `<<<<<<< HEAD\n${LOCK}=======\n${LOCK}>>>>>>> theirs\n`),
      /\(not valid YAML: /,
    ],
    [
      "a definition edited by hand",
      (lock) => writeFileSync(lock, LOCK.replace("Fetches a page.", "Fetches a page, and more.")),
      /\(servers\.web\.tools\.fetch: sha256 does not match its definition/,
    ],
    ["a FIFO", (lock) => spawnSync("mkfifo", [lock]), /\(not a regular file but a FIFO\)/],
  ];
  for (const [what, make, why] of cases) {
    it(`${what}: refused before anything is written, exit 3, one line`, async () => {
      const tmp = tempDir();
      try {
        const dir = path.join(tmp.path, "A");
        mkdirSync(dir);
        writeFileSync(path.join(dir, "hermit.yaml"), MANIFEST);
        make(path.join(dir, "hermit.lock"));
        const before = what === "a FIFO" ? "" : readFileSync(path.join(dir, "hermit.lock"), "utf8");
        const r = await runHermit(["add", "A", "memory"], {
          cwd: tmp.path,
          flavor: deno ? "deno" : "bun",
          timeoutMs: 120_000,
        });
        assert.equal(r.code, 3, r.stdout + r.stderr);
        const lines = r.stderr.trimEnd().split("\n");
        assert.equal(lines.length, 1, r.stderr);
        assert.match(lines[0], /^error: A\/hermit\.lock cannot be read \(/);
        assert.match(lines[0], why);
        assert.match(lines[0], /\): fix it or run 'hermit lock A' first; nothing was changed$/);
        assert.equal(readFileSync(path.join(dir, "hermit.yaml"), "utf8"), MANIFEST, "hermit.yaml untouched");
        if (what !== "a FIFO") {
          assert.equal(readFileSync(path.join(dir, "hermit.lock"), "utf8"), before, "hermit.lock untouched");
        }
      } finally {
        tmp.cleanup();
      }
    });
  }
});
