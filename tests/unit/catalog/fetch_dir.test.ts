/**
 * `src/catalog/fetch_dir.ts`: which fetch directories a later `hermit add` removes. Its own and
 * a live owner's are kept, as is one whose owner is gone while its fetch's group still runs (the
 * watchdog's grace); a dead owner's, or one whose pid now belongs to another process, is removed;
 * the old naming only once a day old and holding nothing but package.json.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import process from "node:process";
import {
  FETCH_GROUP_FILE,
  fetchDirOwner,
  LEGACY_STALE_MS,
  makeFetchDir,
  noteFetchGroup,
  removeStaleFetchDirs,
  startTag,
} from "../../../src/catalog/fetch_dir.ts";
import { processStartTime } from "../../../src/platform/proc.ts";
import { kill, Reaper, sleepingGroup, waitFor } from "../../helpers/procs.ts";
import { tempDir } from "../../helpers/tmp.ts";

const reaper = new Reaper();
const tmp = tempDir("hermit-fetchdirs-");
after(async () => {
  await reaper.reap();
  tmp.cleanup();
});

/** A pid no process has (above any pid_max). */
const DEAD = 4294967292;

function fetchDir(name: string, mode = 0o700): string {
  const dir = path.join(tmp.path, name);
  mkdirSync(dir, { mode });
  writeFileSync(path.join(dir, "package.json"), "{}\n");
  return dir;
}

describe("fetch directories", () => {
  it("names its owner: pid and start tag; the old naming is told apart; other names are not hermit's", () => {
    assert.deepEqual(fetchDirOwner("hermit-fetch-123-0a1b2c3d-Ab12Zz"), { pid: 123, tag: "0a1b2c3d" });
    assert.deepEqual(fetchDirOwner("hermit-fetch-123-0-Ab12Zz"), { pid: 123, tag: "0" });
    assert.equal(fetchDirOwner("hermit-fetch-Ab12Zz"), "legacy");
    for (const other of ["hermit-fetch-", "hermit-fetch-123-xyz-Ab12Zz", "hermit-fetch-1-0-Ab12Zz/..", "x"]) {
      assert.equal(fetchDirOwner(other), undefined, other);
    }
    const mine = makeFetchDir(tmp.path);
    assert.deepEqual(fetchDirOwner(path.basename(mine)), {
      pid: process.pid,
      tag: startTag(processStartTime(process.pid)),
    });
  });

  it("removes a dead owner's and a reused pid's, keeps a live owner's and one whose fetch still runs", async () => {
    const mine = makeFetchDir(tmp.path);
    const dead = fetchDir(`hermit-fetch-${DEAD}-0-aaaaaa`);
    const reused = fetchDir(`hermit-fetch-${process.pid}-ffffffff-bbbbbb`); // our pid, another start
    const fetching = fetchDir(`hermit-fetch-${DEAD}-0-cccccc`);
    const group = await sleepingGroup(reaper);
    noteFetchGroup(fetching, group);
    const oldDone = fetchDir("hermit-fetch-dddddd");
    const oldBusy = fetchDir("hermit-fetch-eeeeee");
    writeFileSync(path.join(oldBusy, "other"), "");
    const oldYoung = fetchDir("hermit-fetch-ffffff");
    const dayAgo = (Date.now() - LEGACY_STALE_MS - 60_000) / 1000;
    for (const d of [oldDone, oldBusy]) utimesSync(d, dayAgo, dayAgo);
    removeStaleFetchDirs(tmp.path);
    assert.ok(existsSync(mine), "our own is kept");
    assert.ok(!existsSync(dead), "a dead owner's is removed");
    assert.ok(!existsSync(reused), "one whose pid now is another process is removed");
    assert.ok(existsSync(path.join(fetching, FETCH_GROUP_FILE)), "kept while its fetch's group runs");
    assert.ok(!existsSync(oldDone), "the old naming, a day old, only package.json: removed");
    assert.ok(existsSync(oldBusy) && existsSync(oldYoung), "the old naming otherwise kept");
    kill(-group);
    await waitFor(() => (removeStaleFetchDirs(tmp.path), !existsSync(fetching)), {
      what: "the directory of a stopped fetch to be removed",
    });
  });
});
