/**
 * A group is known to the watchdog the moment its spawn returns: hermit killed outright in that
 * same tick (nothing awaited after the spawn) still has the group reaped. Under Bun a line written
 * to a child_process pipe waited for the event loop, so this lost the group every time. Run from
 * the sources under each runtime this machine has (the compiled binary is Bun's: `add_killed` and
 * `serve_faults` kill it). Linux and macOS (process groups). And the watchdog, which runs
 * unconfined, runs nothing from the project: a relative entry in the host's PATH (`node_modules/.bin`
 * is a common one) resolved against the project, where a confined entry may write.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { bunPath, fixtures } from "../helpers/hermit.ts";
import { groupMembers, Reaper, waitFor } from "../helpers/procs.ts";
import { tempDir } from "../helpers/tmp.ts";

const reaper = new Reaper();
const dir = tempDir("hermit-link-");
after(async () => {
  await reaper.reap();
  dir.cleanup();
});

const fixture = path.join(fixtures, "process", "killed_after_spawn.ts");
const deno = process.env.HERMIT_DENO ?? (globalThis as { Deno?: { execPath(): string } }).Deno?.execPath();
const runtimes: [string, string[]][] = [
  ...(deno ? [["deno", [deno, "run", "-A", "--no-check", fixture]] as [string, string[]]] : []),
  ...(bunPath() ? [["bun", [bunPath()!, fixture]] as [string, string[]]] : []),
];

describe(
  "the watchdog hears of a group before hermit can be killed",
  { skip: process.platform === "win32" },
  () => {
    for (const [name, argv] of runtimes) {
      it(`${name}: killed in the tick it spawned a group, the group is still reaped`, async () => {
        const file = path.join(dir.path, `pgid-${name}`);
        const r = spawnSync(argv[0], [...argv.slice(1), file], {
          stdio: ["ignore", "ignore", "pipe"],
          timeout: 60_000,
        });
        assert.equal(r.signal, "SIGKILL", `the fixture killed itself: ${r.stderr}`);
        const pgid = Number(readFileSync(file, "utf8").trim());
        assert.ok(pgid > 1, `a group id: ${pgid}`);
        reaper.trackGroup(pgid);
        // sleep ends at the watchdog's SIGTERM; generous for a loaded machine
        await waitFor(() => groupMembers(pgid).length === 0, {
          timeoutMs: 10_000,
          what: `group ${pgid} to be reaped`,
        });
      });
    }
  },
);

describe(
  "the watchdog runs nothing a relative PATH entry finds in the project",
  { skip: process.platform === "win32" },
  () => {
    for (const [name, argv] of runtimes) {
      it(`${name}: its date and sleep come from absolute PATH entries only, run from /`, async () => {
        const project = path.join(dir.path, `project-${name}`);
        const marker = path.join(dir.path, `planted-${name}`);
        mkdirSync(path.join(project, "node_modules", ".bin"), { recursive: true });
        for (const tool of ["date", "sleep"]) {
          const file = path.join(project, "node_modules", ".bin", tool);
          // what a confined entry could plant: runs when the watchdog reaps, unconfined
          writeFileSync(file, `#!/bin/sh\necho ${tool} >> '${marker}'\nexec /bin/${tool} "$@"\n`);
          chmodSync(file, 0o755);
        }
        const file = path.join(dir.path, `pgid-path-${name}`);
        const r = spawnSync(argv[0], [...argv.slice(1), file, "true"], {
          cwd: project,
          // the group's own command must not come from there either: the fixture runs `sleep` by path
          env: { ...process.env, PATH: `node_modules/.bin:${process.env.PATH}`, HERMIT_LOG_TIMESTAMPS: "1" },
          stdio: ["ignore", "ignore", "pipe"],
          timeout: 60_000,
        });
        assert.equal(r.signal, "SIGKILL", `the fixture killed itself: ${r.stderr}`);
        const pgid = Number(readFileSync(file, "utf8").trim());
        reaper.trackGroup(pgid);
        await waitFor(() => groupMembers(pgid).length === 0, {
          timeoutMs: 10_000,
          what: `group ${pgid} to be reaped`,
        });
        // spawnSync returned once the watchdog (holding stderr) exited: it said why it stopped the
        // group, with a timestamp, so `date` ran
        assert.match(
          String(r.stderr),
          /^\d{4}-\d\d-\d\dT\S+ hermit: warn: watchdog: parent \d+ closed the pipe/m,
        );
        assert.equal(existsSync(marker) ? readFileSync(marker, "utf8") : "", "", "a planted program ran");
      });
    }
  },
);
