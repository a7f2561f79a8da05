/**
 * The Windows twins of hermit's POSIX process control, decided purely and so tested on any OS:
 * the tree kill (which processes belong to a child's tree, from a process-table snapshot), the
 * pid-reuse guards (tree links and the watchdog's parent check use creation times), the reading
 * of NtQuerySystemInformation's process list, batch-file command lines for cmd.exe (`npx.cmd`),
 * PATHEXT command resolution, the compiled-binary check on Windows URLs, and hermit's own state
 * directory. Host config locations on Windows are in `windows_hosts.test.ts`.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { isCompiledUrl } from "../../../src/platform/runtime.ts";
import { stateDir } from "../../../src/platform/paths.ts";
import { which, windowsCandidates } from "../../../src/platform/which.ts";
import {
  batchArgument,
  BatchArgumentError,
  comspecOf,
  windowsSpawnPlan,
} from "../../../src/platform/win_cmd.ts";
import {
  indexTable,
  isChildOf,
  parseProcessInformation,
  type ProcEntry,
  treeMembers,
} from "../../../src/platform/win_tree.ts";
import { parentCheck, parentGoneReason } from "../../../src/process/parent.ts";

const e = (pid: number, ppid: number, start: number): ProcEntry => ({ pid, ppid, start: BigInt(start) });
const sorted = (a: number[]) => [...a].sort((x, y) => x - y);

describe("windows: tree kill (which processes a child's tree holds)", () => {
  // 100 is hermit; 200 the child it spawned (cmd.exe), 300/301 its children, 400 a grandchild.
  const base = [
    e(4, 0, 1),
    e(100, 50, 10),
    e(200, 100, 20),
    e(300, 200, 30),
    e(301, 200, 31),
    e(400, 300, 40),
  ];

  it("takes the leader and every descendant, nothing else", () => {
    assert.deepEqual(sorted(treeMembers(base, { pid: 200, start: 20n })), [200, 300, 301, 400]);
    assert.deepEqual(sorted(treeMembers(base, { pid: 300, start: 30n })), [300, 400]);
  });

  it("answers the same from one index of the snapshot, for every tree asked about", () => {
    const index = indexTable(base);
    assert.deepEqual(sorted(treeMembers(index, { pid: 200, start: 20n })), [200, 300, 301, 400]);
    assert.deepEqual(sorted(treeMembers(index, { pid: 300, start: 30n })), [300, 400]);
    assert.deepEqual(treeMembers(index, { pid: 200, start: 19n }), [], "another process's tree");
  });

  it("still finds the orphans after the leader has exited", () => {
    const gone = base.filter((p) => p.pid !== 200);
    assert.deepEqual(sorted(treeMembers(gone, { pid: 200, start: 20n })), [300, 301, 400]);
  });

  it("never takes a process that reused the leader's pid, nor that process's children", () => {
    // 200 exited; its pid now belongs to an unrelated program started at 50, which has a child.
    const reused = [...base.filter((p) => p.pid !== 200), e(200, 7, 50), e(500, 200, 55)];
    assert.deepEqual(sorted(treeMembers(reused, { pid: 200, start: 20n })), [300, 301, 400]);
  });

  it("ignores a stale parent link: a process naming the leader's pid but older than it", () => {
    // 600 names 200 as its parent but was created before 200: its real parent was an earlier 200.
    const stale = [...base, e(600, 200, 15), e(601, 600, 16)];
    assert.deepEqual(sorted(treeMembers(stale, { pid: 200, start: 20n })), [200, 300, 301, 400]);
  });

  it("is empty when nothing of the tree is left, and never takes the System processes", () => {
    assert.deepEqual(treeMembers([e(4, 0, 1), e(100, 50, 10)], { pid: 200, start: 20n }), []);
    assert.deepEqual(treeMembers([e(0, 0, 0), e(4, 0, 1)], { pid: 0, start: 0n }), []);
    assert.deepEqual(treeMembers([e(4, 0, 1)], { pid: 4, start: 1n }), []);
  });

  it("survives a cycle of parent links", () => {
    const cycle = [e(10, 11, 5), e(11, 10, 6)];
    assert.deepEqual(sorted(treeMembers(cycle, { pid: 10, start: 5n })), [10, 11]);
  });
});

describe("windows: the pid-reuse guard", () => {
  it("a child link needs the child created after the parent and before any reuse of its pid", () => {
    const parent = { pid: 200, start: 20n };
    assert.equal(isChildOf(e(300, 200, 30), parent, e(200, 100, 20)), true);
    assert.equal(isChildOf(e(300, 200, 30), parent, undefined), true, "parent exited: still its child");
    assert.equal(isChildOf(e(300, 200, 10), parent, undefined), false, "older than the parent");
    assert.equal(isChildOf(e(300, 200, 30), parent, e(200, 7, 35)), true, "made before the reuse");
    assert.equal(isChildOf(e(300, 200, 30), parent, e(200, 7, 30)), false, "made by the new holder");
    assert.equal(isChildOf(e(300, 201, 30), parent, undefined), false);
  });

  it("the watchdog checks its parent by pid and creation time on Windows, even when it is our parent", () => {
    assert.equal(parentCheck("win32", 100, 100), "identity", "Windows never reparents");
    assert.equal(parentCheck("linux", 100, 100), "ppid");
    assert.equal(parentCheck("linux", 100, 1), "identity");
    const facts = { check: "identity" as const, watched: 100, ppidNow: 100 };
    assert.equal(parentGoneReason({ ...facts, alive: true, startThen: "7", startNow: "7" }), undefined);
    assert.equal(parentGoneReason({ ...facts, alive: false, startThen: "7" }), "parent 100 is gone");
    assert.equal(
      parentGoneReason({ ...facts, alive: true, startThen: "7", startNow: "9" }),
      "parent 100 is gone (pid reused)",
    );
    // A ppid that stays the same proves nothing on Windows: only liveness and identity count.
    assert.equal(
      parentGoneReason({ ...facts, alive: false, startThen: "7", ppidNow: 100 }),
      "parent 100 is gone",
    );
    assert.equal(
      parentGoneReason({ check: "ppid", watched: 100, ppidNow: 1, alive: true }),
      "parent 100 is gone",
    );
    assert.equal(parentGoneReason({ check: "ppid", watched: 100, ppidNow: 100, alive: true }), undefined);
  });
});

describe("windows: reading the process table (SYSTEM_PROCESS_INFORMATION)", () => {
  function record(pid: number, ppid: number, start: bigint, next: number, size = 256): Uint8Array {
    const b = new Uint8Array(size);
    const v = new DataView(b.buffer);
    v.setUint32(0, next, true);
    v.setBigUint64(32, start, true);
    v.setBigUint64(80, BigInt(pid), true);
    v.setBigUint64(88, BigInt(ppid), true);
    return b;
  }
  const concat = (...parts: Uint8Array[]) => {
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) (out.set(p, at), at += p.length);
    return out;
  };

  it("follows NextEntryOffset and reads pid, parent pid and creation time", () => {
    const buf = concat(
      record(0, 0, 0n, 256),
      record(4, 0, 1n, 312, 312),
      record(5120, 4, 133_000_000_000_000_000n, 0),
    );
    assert.deepEqual(parseProcessInformation(buf), [
      { pid: 0, ppid: 0, start: 0n },
      { pid: 4, ppid: 0, start: 1n },
      { pid: 5120, ppid: 4, start: 133_000_000_000_000_000n },
    ]);
  });

  it("stops at a truncated record or the returned length, never reads past it", () => {
    const buf = concat(record(8, 4, 2n, 256), record(9, 8, 3n, 256), new Uint8Array(40));
    assert.deepEqual(parseProcessInformation(buf).map((p) => p.pid), [8, 9]);
    assert.deepEqual(parseProcessInformation(buf, 256).map((p) => p.pid), [8]);
    assert.deepEqual(parseProcessInformation(new Uint8Array(10)), []);
    assert.deepEqual(parseProcessInformation(record(8, 4, 2n, 3)).map((p) => p.pid), [8], "a bad offset");
  });
});

describe("windows: batch files (npx.cmd) through cmd.exe, without a shell", () => {
  it("runs a .exe directly and a .cmd/.bat through %ComSpec% with a verbatim line", () => {
    assert.deepEqual(windowsSpawnPlan("C:\\node\\node.exe", ["a b"]), {
      file: "C:\\node\\node.exe",
      args: ["a b"],
      verbatim: false,
    });
    const plan = windowsSpawnPlan(
      "C:\\Program Files\\nodejs\\npx.cmd",
      ["-y", "@modelcontextprotocol/server-filesystem", "C:\\My Projects\\x"],
      "C:\\Windows\\system32\\cmd.exe",
    );
    assert.deepEqual(plan, {
      file: "C:\\Windows\\system32\\cmd.exe",
      args: [
        "/e:ON",
        "/v:OFF",
        "/d",
        "/s",
        "/c",
        '""C:\\Program Files\\nodejs\\npx.cmd" -y @modelcontextprotocol/server-filesystem "C:\\My Projects\\x""',
      ],
      verbatim: true,
    });
    assert.equal(windowsSpawnPlan("x.BAT", []).file, "cmd.exe", "cmd.exe when ComSpec is unset");
  });

  it("quotes what cmd.exe would interpret and neutralizes %VAR% (Rust's std, CVE-2024-24576)", () => {
    const cases: [string, string][] = [
      ["plain", "plain"],
      ["C:\\dir\\file.txt", "C:\\dir\\file.txt"],
      ["", '""'],
      ["a b", '"a b"'],
      ["a&b|c>d<e^f", '"a&b|c>d<e^f"'],
      ["(x) !y! 'z' =;,", "\"(x) !y! 'z' =;,\""],
      ['say "hi"', '"say ""hi"""'],
      ['back\\"slash', '"back\\\\""slash"'],
      ["trailing\\", '"trailing\\\\"'],
      ["50%", '"50%%cd:~,%"'],
      ["%PATH%", '"%%cd:~,%PATH%%cd:~,%"'],
      ["@scope/pkg@1.2.3", "@scope/pkg@1.2.3"],
    ];
    for (const [arg, want] of cases) assert.equal(batchArgument(arg), want, JSON.stringify(arg));
  });

  it("refuses what cannot be passed to a batch file at all", () => {
    assert.throws(() => batchArgument("two\nlines"), BatchArgumentError);
    assert.throws(() => windowsSpawnPlan("C:\\x.cmd", ["a\r\nb"]), BatchArgumentError);
    assert.throws(() => windowsSpawnPlan('C:\\"x.cmd', []), BatchArgumentError);
  });

  it("finds ComSpec whatever the key's case", () => {
    assert.equal(comspecOf({ ComSpec: "C:\\W\\cmd.exe" }), "C:\\W\\cmd.exe");
    assert.equal(comspecOf({ COMSPEC: "D:\\cmd.exe", PATH: "x" }), "D:\\cmd.exe");
    assert.equal(comspecOf({}), undefined);
  });
});

describe("windows: command resolution (PATHEXT, no shell)", () => {
  const files = new Set([
    "C:\\Program Files\\nodejs\\npx",
    "C:\\Program Files\\nodejs\\npx.cmd",
    "C:\\Program Files\\nodejs\\node.exe",
    "C:\\tools\\uvx.exe",
    "C:\\adapter\\tools\\run.bat",
    "C:\\adapter\\tools\\script.py",
  ]);
  const opts = {
    platform: "win32" as const,
    path: '"C:\\Program Files\\nodejs";C:\\tools;;',
    pathext: ".COM;.EXE;.BAT;.CMD",
    cwd: "C:\\adapter",
    isExecutable: (f: string) => files.has(f),
  };

  it("tries the PATHEXT extensions, never npm's extension-less shell script", () => {
    assert.equal(which("npx", opts), "C:\\Program Files\\nodejs\\npx.cmd");
    assert.equal(which("node", opts), "C:\\Program Files\\nodejs\\node.exe");
    assert.equal(which("uvx", opts), "C:\\tools\\uvx.exe");
    assert.equal(which("missing", opts), undefined);
  });

  it("takes a name that already has a PATHEXT extension as it is, in any case", () => {
    assert.equal(which("npx.cmd", opts), "C:\\Program Files\\nodejs\\npx.cmd");
    assert.deepEqual(windowsCandidates("NODE.EXE", ".EXE;.CMD"), ["NODE.EXE"]);
    assert.deepEqual(windowsCandidates("python3.11", ".EXE;.CMD"), ["python3.11.exe", "python3.11.cmd"]);
  });

  it("resolves a relative path against the adapter directory", () => {
    assert.equal(which("tools\\run", opts), "C:\\adapter\\tools\\run.bat");
    assert.equal(which("tools/run.bat", opts), "C:\\adapter\\tools\\run.bat");
    assert.equal(which("tools\\script.py", opts), undefined, ".py is not in PATHEXT");
  });
});

describe("windows: the compiled binary knows it is compiled", () => {
  it("reads Bun's Windows module URL, whose tilde arrives URL-encoded", () => {
    assert.equal(isCompiledUrl("file:///B:/%7EBUN/root/hermit-windows-x64.exe"), true);
    assert.equal(isCompiledUrl("file:///$bunfs/root/hermit"), true);
    assert.equal(isCompiledUrl("file:///C:/Users/me/hermit/src/platform/runtime.ts"), false);
  });
});

describe("windows: where hermit keeps its own state", () => {
  it("is HERMIT_HOME, else %LOCALAPPDATA%\\hermit, else AppData\\Local under %USERPROFILE%", () => {
    const home = "C:\\Users\\Ada Lovelace";
    assert.equal(stateDir("win32", { HERMIT_HOME: "D:\\hermit state" }, home), "D:\\hermit state");
    assert.equal(
      stateDir("win32", { LOCALAPPDATA: "C:\\Users\\Ada Lovelace\\AppData\\Local" }, home),
      "C:\\Users\\Ada Lovelace\\AppData\\Local\\hermit",
    );
    assert.equal(
      stateDir("win32", { USERPROFILE: "C:\\Users\\Ada Lovelace" }, "ignored"),
      "C:\\Users\\Ada Lovelace\\AppData\\Local\\hermit",
    );
  });
});
