/**
 * The test command on a machine without an OS tool: a suite that needs busybox, run by the real
 * Deno and Bun test runners with a PATH where busybox is not, is skipped (exit 0) and recorded;
 * both runtimes record the same, so the run's summary names the tool, its fix, the test file and
 * the one install command once; under CI the same suite fails with the fix.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { bunPath, root, runCommand } from "../helpers/hermit.ts";
import {
  INSTALL_COMMAND,
  readSkips,
  requirements,
  type SkipRecord,
  skipSummary,
} from "../helpers/requirements.ts";
import { tempDir } from "../helpers/tmp.ts";

const FIXTURE = "tests/fixtures/skips/needs_busybox.ts";
const g = globalThis as unknown as { Deno?: { execPath(): string } };
const deno = process.env.HERMIT_DENO ?? g.Deno?.execPath();
const bun = bunPath();

/** The fixture under `runtime` with an empty PATH (no busybox), recording skips to `skips`. */
function runFixture(runtime: "deno" | "bun", env: Record<string, string>) {
  const [cmd, args] = runtime === "deno"
    ? [deno!, ["test", "-A", "--no-check", FIXTURE]]
    : [bun!, ["test", "--timeout", "60000", `./${FIXTURE}`]];
  const base: Record<string, string> = { HOME: process.env.HOME ?? "/tmp", PATH: env.PATH };
  return runCommand(cmd, args, { cwd: root, env: { ...base, ...env }, timeoutMs: 120_000 });
}

const runners = requirements([
  { what: "deno (HERMIT_DENO)", ok: !!deno, fix: "run it through deno task test, which sets HERMIT_DENO" },
  { what: "bun (node_modules/.bin/bun)", ok: !!bun, fix: "npm ci" },
]);

describe(
  "tests whose OS tool is missing",
  { skip: runners.skip },
  () => {
    before(() => runners.assertReady());
    const tmp = tempDir("hermit-skips-");
    const empty = path.join(tmp.path, "empty-path");
    mkdirSync(empty);
    after(() => tmp.cleanup());

    it("are skipped with the reason outside CI, the same under Deno and Bun, in one summary", async () => {
      const records: Record<string, SkipRecord[]> = {};
      for (const runtime of ["deno", "bun"] as const) {
        const file = path.join(tmp.path, `skips-${runtime}.jsonl`);
        const r = await runFixture(runtime, { PATH: empty, HERMIT_TEST_SKIPS: file });
        assert.equal(r.code, 0, `${runtime}: a skipped suite is not a failure\n${r.stdout}${r.stderr}`);
        records[runtime] = readSkips(file);
        assert.deepEqual(records[runtime], [
          { file: FIXTURE, test: "runs busybox", what: "busybox", fix: "apt-get install -y busybox-static" },
        ], runtime);
      }
      const summary = skipSummary(records);
      assert.equal(
        summary,
        "skipped: 1 test file needs what this machine lacks (CI installs it and fails without it):\n" +
          "  busybox is missing (apt-get install -y busybox-static):\n" +
          `    ${FIXTURE} (runs busybox)\n` +
          `install all of it (Debian packages and the host CLIs, as CI does): ${INSTALL_COMMAND}\n`,
      );
    });

    it("the summary groups what one command installs, and says where only one runtime skipped", () => {
      const hosts = "npm --prefix .ci/hosts ci";
      const both: SkipRecord[] = [
        { file: "tests/e2e/host_claude.test.ts", what: "Claude Code CLI", fix: hosts },
        { file: "tests/e2e/host_deploy.test.ts", what: "Claude Code CLI", fix: hosts },
        { file: "tests/e2e/host_deploy.test.ts", what: "Codex CLI", fix: hosts },
      ];
      const wine = {
        file: "tests/e2e/platforms_windows.test.ts",
        what: "wine64",
        fix: "apt-get install -y wine64",
      };
      assert.equal(
        skipSummary({ deno: [...both, wine], bun: both }),
        "skipped: 3 test files need what this machine lacks (CI installs it and fails without it):\n" +
          "  wine64 is missing (apt-get install -y wine64):\n" +
          "    tests/e2e/platforms_windows.test.ts [deno only]\n" +
          `  Claude Code CLI and Codex CLI are missing (${hosts}):\n` +
          "    tests/e2e/host_claude.test.ts\n" +
          "    tests/e2e/host_deploy.test.ts\n" +
          `install all of it (Debian packages and the host CLIs, as CI does): ${INSTALL_COMMAND}\n`,
      );
      assert.equal(skipSummary({ deno: [], bun: [] }), "", "nothing skipped, nothing said");
    });

    it("without the test command's record file, each skip is said on stderr", async () => {
      const r = await runFixture("bun", { PATH: empty });
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(
        r.stderr,
        /skipped tests\/fixtures\/skips\/needs_busybox\.ts \(runs busybox\): busybox is missing/,
      );
    });

    it("fail under CI, naming the fix", async () => {
      for (const runtime of ["deno", "bun"] as const) {
        const file = path.join(tmp.path, `ci-${runtime}.jsonl`);
        const r = await runFixture(runtime, { PATH: empty, CI: "1", HERMIT_TEST_SKIPS: file });
        assert.notEqual(r.code, 0, `${runtime}: under CI a missing tool fails the suite`);
        assert.match(
          r.stdout + r.stderr,
          /busybox is missing \(apt-get install -y busybox-static\)/,
          runtime,
        );
        assert.deepEqual(readSkips(file), [], "nothing is skipped under CI");
      }
    });

    it("name only packages the install script installs", async () => {
      const r = await runCommand(path.join(root, INSTALL_COMMAND), ["--list"], { timeoutMs: 30_000 });
      assert.equal(r.code, 0, r.stderr);
      const listed = new Set(r.stdout.split("\n").filter(Boolean));
      const named = new Set<string>();
      // every test file and helper (tests/unit too), and the skip fixture; not the other fixtures
      const fixtures = `fixtures${path.sep}`;
      const files = readdirSync(path.join(root, "tests"), { recursive: true, encoding: "utf8" })
        .filter((f) => f.endsWith(".ts") && (!f.startsWith(fixtures) || f.startsWith(`${fixtures}skips`)));
      let tables = 0;
      for (const f of files) {
        const text = readFileSync(path.join(root, "tests", f), "utf8");
        for (const m of text.matchAll(/apt-get install -y ([a-z0-9][a-z0-9.+-]+)/g)) named.add(m[1]);
        // tool → package tables: install.test.ts's PACKAGES and the object given to each toolNeeds()
        const table = /const PACKAGES: Record<string, string> = \{([^}]*)\}|toolNeeds\(\{([^}]*)\}/g;
        for (const t of text.matchAll(table)) {
          tables++;
          for (const m of (t[1] ?? t[2]).matchAll(/: "([a-z0-9][a-z0-9.+-]+)"/g)) named.add(m[1]);
        }
      }
      assert.ok(tables >= 2, "the PACKAGES table and the fixture's toolNeeds({ busybox: … }) are read");
      const unlisted = [...named].filter((p) => !listed.has(p));
      assert.deepEqual(unlisted, [], `packages tests name that ${INSTALL_COMMAND} does not install`);
    });
  },
);
