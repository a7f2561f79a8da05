/**
 * `findEscapes` (`src/process/escapes.ts`), the pure decision which groups below hermit left the
 * groups it tracks, and where they came from; `joiningStop`, which of them join a stop under way;
 * plus the `ps` table it reads on systems without a
 * subreaper. The real thing (setsid daemons of command tools) is in `tests/e2e/escapes.test.ts`.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import { findEscapes, joiningStop, type ProcRow, psRows } from "../../../src/process/escapes.ts";
import { requirements, toolNeeds } from "../../helpers/requirements.ts";

const SELF = 100;
const row = (pid: number, ppid: number, pgid: number, zombie = false): ProcRow => ({
  pid,
  ppid,
  pgid,
  zombie,
});
const facts = (tracked: number[], runtimeChildren: number[] = []) => ({
  self: SELF,
  ownPgid: 90,
  tracked: new Set(tracked),
  runtimeChildren: new Set(runtimeChildren),
});

describe("findEscapes", () => {
  it("a setsid daemon below a tracked group escapes from that group", () => {
    // hermit → tool sh (group 200) → daemon (setsid: group 300) → its child (group 300)
    const rows = [row(200, SELF, 200), row(201, 200, 200), row(300, 200, 300), row(301, 300, 300)];
    assert.deepEqual(findEscapes(rows, facts([200])), { escapes: [{ pgid: 300, owner: 200 }], zombies: [] });
  });

  it("an orphan re-parented to hermit, in a group of its own, is an escape of no group", () => {
    const rows = [row(200, SELF, 200), row(300, SELF, 300)];
    assert.deepEqual(findEscapes(rows, facts([200])).escapes, [{ pgid: 300, owner: undefined }]);
  });

  it("an orphan re-parented to hermit that stayed in its group is no escape", () => {
    const rows = [row(200, SELF, 200), row(201, SELF, 200)];
    assert.deepEqual(findEscapes(rows, facts([200])).escapes, []);
  });

  it("a daemon's own setsid child escapes from the same tracked group", () => {
    const rows = [row(200, SELF, 200), row(300, 200, 300), row(400, 300, 400)];
    assert.deepEqual(findEscapes(rows, facts([200])).escapes, [
      { pgid: 300, owner: 200 },
      { pgid: 400, owner: 200 },
    ]);
  });

  it("never hermit's own group, init's, or a tracked one; never the watchdog's subtree", () => {
    const rows = [
      row(200, SELF, 200),
      row(201, 200, 90), // joined hermit's own group
      row(202, 200, 1),
      row(203, 200, 0),
      row(210, 200, 250), // a tracked group reached from another one's lineage
      row(250, SELF, 250),
      row(500, SELF, 500), // the watchdog (its own session) …
      row(501, 500, 501), // … and what it runs
    ];
    assert.deepEqual(findEscapes(rows, facts([200, 250], [500])).escapes, []);
  });

  it("zombies are no escapes; the adopted ones (not the runtime's) are to be reaped", () => {
    const rows = [
      row(200, SELF, 200, true), // a group leader the runtime has yet to reap
      row(300, SELF, 300, true), // an adopted orphan that exited
      row(500, SELF, 500, true), // the watchdog, exited, the runtime's to reap
      row(210, 300, 210, true), // not hermit's child: its parent reaps it
    ];
    assert.deepEqual(findEscapes(rows, facts([200], [500])), { escapes: [], zombies: [300] });
  });

  it("each group once, and only hermit's subtree", () => {
    const rows = [
      row(200, SELF, 200),
      row(300, 200, 300),
      row(301, 200, 300),
      row(700, 1, 700), // a stranger, not below hermit
      row(701, 700, 701),
    ];
    assert.deepEqual(findEscapes(rows, facts([200])).escapes, [{ pgid: 300, owner: 200 }]);
  });
});

describe("joiningStop", () => {
  // 300 left group 200 (being stopped), 400 left group 250 (still running), 500 and 600 are
  // orphans: 500 known before the stop began, 600 adopted since (a daemon's SIGTERM answer)
  const escaped = new Map<number, number | undefined>([[300, 200], [400, 250], [500, undefined], [
    600,
    undefined,
  ]]);
  const before = new Set([300, 400, 500]);

  it("a stop of one group: its own escapes and the orphans adopted since it began, not signalled yet", () => {
    assert.deepEqual(joiningStop(escaped, { owner: 200, before, signalled: new Set() }), [300, 600]);
    assert.deepEqual(joiningStop(escaped, { owner: 200, before, signalled: new Set([300]) }), [600]);
    assert.deepEqual(joiningStop(escaped, { owner: 200, before, signalled: new Set([300, 600]) }), []);
  });

  it("never another running group's escapes, nor an orphan hermit had before the stop", () => {
    const got = joiningStop(escaped, { owner: 200, before, signalled: new Set() });
    assert.ok(!got.includes(400) && !got.includes(500), `${got}`);
  });

  it("a stop of everything: every escape not signalled yet", () => {
    assert.deepEqual(joiningStop(escaped, { owner: undefined, before, signalled: new Set([300]) }), [
      400,
      500,
      600,
    ]);
  });
});

const ps = process.platform === "win32" ? undefined : requirements(toolNeeds({ ps: "procps" }), "psRows");

describe("psRows", { skip: ps ? ps.skip : "POSIX only" }, () => {
  it("lists this process with its parent and group", () => {
    ps?.assertReady();
    const me = psRows().find((r) => r.pid === process.pid);
    assert.ok(me, "this process is in ps's table");
    assert.equal(me.ppid, process.ppid);
    assert.equal(me.zombie, false);
    assert.ok(me.pgid > 0);
  });
});

describe("following escapes ends with the watching", {
  skip: process.platform !== "linux" ? "Linux only" : false,
}, () => {
  it("after enable and disable, this process is no subreaper: an orphan goes to init, not here", async () => {
    const { disableWatchdog, enableWatchdog } = await import("../../../src/process/supervisor.ts");
    const { spawnSync } = await import("node:child_process");
    const { readFileSync } = await import("node:fs");
    enableWatchdog();
    await disableWatchdog();
    // a shell that leaves a background sleep behind and exits: the sleep is orphaned at once
    const r = spawnSync("sh", ["-c", "sleep 30 >/dev/null 2>&1 & echo $!"], { encoding: "utf8" });
    const orphan = Number(r.stdout.trim());
    try {
      const ppid = Number(readFileSync(`/proc/${orphan}/stat`, "utf8").split(") ")[1].split(" ")[1]);
      assert.notEqual(ppid, process.pid, "the test process adopted the orphan: it is still a subreaper");
    } finally {
      process.kill(orphan, "SIGKILL");
    }
  });
});
