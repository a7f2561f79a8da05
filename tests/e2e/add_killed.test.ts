/**
 * `hermit add` killed outright while it fetches a catalog entry's package into npm's cache: the
 * fetch runs in a watched process group like every server hermit starts, so the watchdog ends it
 * (npx and what npx started), and hermit.yaml is written only once the entry ran, so it is left as
 * it was. The fake npx stands in for a slow download (a real one's timing is the network's).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import { hermitArgv, hermitEnv } from "../helpers/hermit.ts";
import { alive, kill, Reaper, waitFor } from "../helpers/procs.ts";
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
});
