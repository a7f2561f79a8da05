/**
 * `hermit add` killed outright while it fetches a catalog entry's package into npm's cache: the
 * fetch runs in a watched process group like every server hermit starts, so the watchdog ends it
 * (npx and what npx started), and hermit.yaml is written only once the entry ran, so it is left as
 * it was. The fake npx stands in for a slow download (a real one's timing is the network's). The
 * private directory the fetch ran in is left behind by the kill; the next `hermit add` removes it,
 * and only it: not the directory of a `hermit add` still running, not a symlink, not another's.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import process from "node:process";
import { hermitArgv, hermitEnv } from "../helpers/hermit.ts";
import { alive, collect, kill, Reaper, waitFor } from "../helpers/procs.ts";
import { tempDir } from "../helpers/tmp.ts";

const MANIFEST = `name: mine
exports:
  tools: [hello]
tools:
  hello:
    description: Says hello
    run: [echo, hi]
`;

describe("hermit add, killed", () => {
  it("kill -9 of hermit add while it fetches a package: the fetch (npx and what it started) goes too, hermit.yaml is as it was", async () => {
    // npx, found first on PATH: records its pid and its child's, then waits
    const tmp = tempDir();
    const reaper = new Reaper();
    try {
      const bin = path.join(tmp.path, "bin");
      const dir = path.join(tmp.path, "adapter");
      const pids = path.join(tmp.path, "pids");
      mkdirSync(bin);
      mkdirSync(dir);
      writeFileSync(path.join(dir, "hermit.yaml"), MANIFEST);
      writeFileSync(path.join(bin, "npx"), `#!/bin/sh\nsleep 1000 &\necho "$$ $!" > ${pids}\nwait\n`, {
        mode: 0o755,
      });
      const env = hermitEnv({ ...process.env, PATH: `${bin}:${process.env.PATH}` });
      const [cmd, ...pre] = hermitArgv();
      const add = spawn(cmd, [...pre, "add", dir, "memory"], {
        env: env as Record<string, string>,
        stdio: "ignore",
      });
      reaper.track(add.pid);
      await waitFor(() => existsSync(pids) && readFileSync(pids, "utf8").includes(" "), {
        timeoutMs: 60_000,
        what: "the fetch to start",
      });
      const fetch = readFileSync(pids, "utf8").trim().split(" ").map(Number);
      fetch.forEach((p) => reaper.track(p));
      kill(add.pid!);
      await waitFor(() => fetch.every((p) => !alive(p)), {
        timeoutMs: 30_000,
        what: "the fetch to be stopped",
      });
      assert.equal(readFileSync(path.join(dir, "hermit.yaml"), "utf8"), MANIFEST, "hermit.yaml untouched");
    } finally {
      await reaper.reap();
      tmp.cleanup();
    }
  });

  it("kill -9 of hermit add leaves its fetch directory; the next hermit add removes it, not a running one's, a symlink or a shared one", async () => {
    // npx, found first on PATH: while the file 'hold' exists it records its pid and its child's and
    // waits (a slow download); without it, it fails at once
    const tmp = tempDir();
    const reaper = new Reaper();
    try {
      const bin = path.join(tmp.path, "bin");
      const dir = path.join(tmp.path, "adapter");
      const tmpdir = path.join(tmp.path, "tmp"); // hermit's TMPDIR: only this test's
      const pids = path.join(tmp.path, "pids");
      const hold = path.join(tmp.path, "hold");
      for (const d of [bin, dir, tmpdir]) mkdirSync(d);
      writeFileSync(path.join(dir, "hermit.yaml"), MANIFEST);
      writeFileSync(hold, "");
      writeFileSync(
        path.join(bin, "npx"),
        `#!/bin/sh\n[ -e ${hold} ] || exit 1\nsleep 1000 &\necho "$$ $!" >> ${pids}\nwait\n`,
        { mode: 0o755 },
      );
      const env = hermitEnv({ ...process.env, PATH: `${bin}:${process.env.PATH}`, TMPDIR: tmpdir });
      const [cmd, ...pre] = hermitArgv();
      const fetchDirs = () => readdirSync(tmpdir).filter((n) => n.startsWith("hermit-fetch-")).sort();
      const fetches = () => existsSync(pids) ? readFileSync(pids, "utf8").trim().split("\n").length : 0;
      const startAdd = (stdio: "ignore" | "pipe") => {
        const add = spawn(cmd, [...pre, "add", dir, "memory"], { env: env as Record<string, string>, stdio });
        reaper.track(add.pid);
        return add;
      };

      // the first hermit add, killed mid-fetch, leaves its directory
      const killed = startAdd("ignore");
      await waitFor(() => fetches() === 1, { timeoutMs: 60_000, what: "the first fetch to start" });
      const [left] = fetchDirs();
      const firstFetch = readFileSync(pids, "utf8").trim().split(" ").map(Number);
      firstFetch.forEach((p) => reaper.track(p));
      kill(killed.pid!);
      await waitFor(() => firstFetch.every((p) => !alive(p)), {
        timeoutMs: 30_000,
        what: "the fetch to be stopped",
      });
      assert.deepEqual(fetchDirs(), [left], "the killed add's fetch directory is left behind");

      // a second one runs (its fetch waiting) while a third, whose fetch fails, comes and goes
      const running = startAdd("ignore");
      await waitFor(() => fetches() === 2, { timeoutMs: 60_000, what: "the second fetch to start" });
      const runningDir = fetchDirs().find((n) => n !== left)!;
      readFileSync(pids, "utf8").trim().split("\n")[1].split(" ").map(Number).forEach((p) => reaper.track(p));
      // decoys with a dead owner's name: a symlink to a directory of ours, and a directory others may enter
      const outside = path.join(tmp.path, "outside");
      mkdirSync(outside);
      writeFileSync(path.join(outside, "keep"), "");
      const deadPid = killed.pid!;
      symlinkSync(outside, path.join(tmpdir, `hermit-fetch-${deadPid}-0-AAAAAA`));
      const shared = path.join(tmpdir, `hermit-fetch-${deadPid}-0-BBBBBB`);
      mkdirSync(shared);
      chmodSync(shared, 0o755);
      rmSync(hold);
      const third = await collect(startAdd("pipe"), undefined, 120_000, "the third hermit add");
      assert.equal(third.code, 3, third.stderr + third.stdout);

      const now = fetchDirs();
      assert.ok(!now.includes(left), `the killed add's directory is removed: ${now.join(" ")}`);
      assert.ok(now.includes(runningDir), "the running add's directory is kept");
      assert.ok(
        lstatSync(path.join(tmpdir, `hermit-fetch-${deadPid}-0-AAAAAA`)).isSymbolicLink(),
        "symlink kept",
      );
      assert.ok(existsSync(path.join(outside, "keep")), "what the symlink points to is untouched");
      assert.ok(existsSync(shared), "a directory others may enter is not hermit's own: kept");
      assert.ok(alive(running.pid!), "the running add runs on");
      assert.equal(readFileSync(path.join(dir, "hermit.yaml"), "utf8"), MANIFEST, "hermit.yaml untouched");
    } finally {
      await reaper.reap();
      tmp.cleanup();
    }
  });
});
