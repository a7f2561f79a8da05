/**
 * The Landlock planner without the kernel: over an injected directory tree, the rules it emits
 * give every path exactly the access its deepest policy line asks for (a property over generated
 * trees and policies), protected paths get no right to their contents, listings stay possible
 * along the way, files and symlinks are handled, and each ABI's unknown rights are masked.
 */
import assert from "node:assert/strict";
import process from "node:process";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  type Entry,
  FILE_RIGHTS,
  FS,
  type FsRule,
  type FsView,
  handledFs,
  handledNet,
  handledScopes,
  type Level,
  planLandlock,
  READ_RIGHTS,
  rulesetAttrSize,
} from "../../../src/sandbox/landlock.ts";
import { coveredByWrite, pinnedDirs } from "../../../src/sandbox/launcher.ts";

/** A tree from paths: a trailing `/` is a directory, `@` marks a symlink. */
function tree(paths: string[]): FsView & { files: string[] } {
  const kids = new Map<string, Entry[]>();
  const kinds = new Map<string, "dir" | "file" | "link">([["/", "dir"]]);
  for (const raw of paths) {
    const link = raw.endsWith("@");
    const dir = raw.endsWith("/");
    const p = raw.replace(/[/@]$/, "");
    const parts = p.split("/").filter(Boolean);
    for (let i = 1; i <= parts.length; i++) {
      const at = "/" + parts.slice(0, i).join("/");
      const kind = i < parts.length || dir ? "dir" : link ? "link" : "file";
      const parent = "/" + parts.slice(0, i - 1).join("/");
      const list = kids.get(parent) ?? [];
      const known = list.find((e) => e.name === parts[i - 1]);
      if (known) {
        // a file named earlier turns out to hold something: it is a directory
        if (kind === "dir") (known.dir = true, known.symlink = false, kinds.set(at, "dir"));
        continue;
      }
      kinds.set(at, kind);
      list.push({ name: parts[i - 1], dir: kind === "dir", symlink: kind === "link" });
      kids.set(parent, list);
    }
  }
  return {
    files: [...kinds.keys()],
    list: (d) => kinds.get(d) === "dir" ? kids.get(d) ?? [] : undefined,
    isDir: (p) => {
      const k = kinds.get(p);
      return k === undefined ? undefined : k === "dir";
    },
  };
}

const within = (p: string, dir: string) => dir === "/" || p === dir || p.startsWith(dir + "/");

/** The access a path ends up with: the union of the rules on it and its ancestors. */
function granted(plan: ReturnType<typeof planLandlock>, p: string): number {
  return plan.rules.filter((r) => within(p, r.path)).reduce((a, r) => a | r.access, 0);
}

function deepest(rules: FsRule[], p: string): Level {
  let best: FsRule | undefined;
  for (const r of rules) if (within(p, r.path) && (!best || r.path.length > best.path.length)) best = r;
  return best?.level ?? "deny";
}

const HOME = [
  "/bin/sh",
  "/etc/passwd",
  "/usr/lib/x.so",
  "/home/u/.ssh/id_ed25519",
  "/home/u/.ssh/known_hosts",
  "/home/u/.bashrc",
  "/home/u/.docker/config.json",
  "/home/u/.docker/cli-plugins/x",
  "/home/u/proj/src/a.ts",
  "/home/u/proj/.serve/endpoint",
  "/home/u/dots@",
  "/home/v/notes",
  "/tmp/",
  "/dev/null",
];

describe("planLandlock: reads everything but the secrets", () => {
  const fs = tree(HOME);
  const abi = 7;
  const all = handledFs(abi);
  const policy: FsRule[] = [
    { path: "/", level: "read" },
    { path: "/home/u/.ssh", level: "deny" },
    { path: "/home/u/.docker/config.json", level: "deny" },
    { path: "/home/u/proj", level: "write" },
    { path: "/home/u/proj/.serve", level: "deny" },
    { path: "/dev/null", level: "write" },
  ];
  const plan = planLandlock(policy, abi, fs);

  it("gives no right to the contents of a protected path", () => {
    for (const p of ["/home/u/.ssh/id_ed25519", "/home/u/.ssh/known_hosts", "/home/u/.docker/config.json"]) {
      assert.equal(granted(plan, p) & (FS.READ_FILE | FS.WRITE_FILE | FS.EXECUTE), 0, p);
    }
    assert.equal(granted(plan, "/home/u/proj/.serve/endpoint") & FS.READ_FILE, 0);
  });

  it("reads the rest, siblings of protected paths included", () => {
    for (
      const p of [
        "/bin/sh",
        "/etc/passwd",
        "/home/u/.bashrc",
        "/home/u/.docker/cli-plugins/x",
        "/home/v/notes",
      ]
    ) {
      assert.equal(granted(plan, p) & READ_RIGHTS, READ_RIGHTS, p);
      assert.equal(granted(plan, p) & FS.WRITE_FILE, 0, p);
    }
  });

  it("writes the writable paths, except the protected path inside one", () => {
    assert.equal(granted(plan, "/home/u/proj/src/a.ts"), all);
    assert.equal(granted(plan, "/dev/null") & FS.WRITE_FILE, FS.WRITE_FILE);
    assert.deepEqual(plan.narrowed, ["/home/u/proj"]);
  });

  it("keeps directories along the way listable (names, not contents)", () => {
    for (const d of ["/", "/home", "/home/u", "/home/u/.docker"]) {
      assert.equal(granted(plan, d) & FS.READ_DIR, FS.READ_DIR, d);
      assert.ok(plan.rules.some((r) => r.path === d && r.access === FS.READ_DIR), d);
    }
  });

  it("opens siblings without following symlinks, and puts no rule on a symlink", () => {
    assert.ok(plan.rules.every((r) => r.path !== "/home/u/dots"));
    assert.equal(plan.rules.find((r) => r.path === "/home/u/.bashrc")?.follow, false);
  });

  it("holds only file rights in a rule on a file", () => {
    for (const r of plan.rules) {
      if (fs.isDir(r.path) === false) assert.equal(r.access & ~FILE_RIGHTS, 0, r.path);
    }
  });

  it("covers a protected path in a writable one by a mount when that is possible", () => {
    const hidden = planLandlock(policy, abi, fs, (p) => p === "/home/u/proj/.serve");
    assert.deepEqual(hidden.hidden, ["/home/u/proj/.serve"]);
    assert.deepEqual(hidden.narrowed, []);
    assert.ok(hidden.rules.some((r) => r.path === "/home/u/proj" && r.access === all));
  });

  it("lets a declared read re-open a file inside a protected directory", () => {
    const p = planLandlock([...policy, { path: "/home/u/.ssh/known_hosts", level: "read" }], abi, fs);
    assert.equal(
      granted(p, "/home/u/.ssh/known_hosts") & READ_RIGHTS,
      FS.READ_FILE | FS.EXECUTE | FS.READ_DIR,
    );
    assert.equal(granted(p, "/home/u/.ssh/id_ed25519") & FS.READ_FILE, 0);
  });
});

describe("planLandlock: every ABI", () => {
  it("handles only the rights each ABI knows", () => {
    assert.equal(handledFs(0), 0);
    assert.equal(handledFs(1), (1 << 13) - 1);
    assert.equal(handledFs(2) & FS.REFER, FS.REFER);
    assert.equal(handledFs(2) & FS.TRUNCATE, 0);
    assert.equal(handledFs(3) & FS.TRUNCATE, FS.TRUNCATE);
    assert.equal(handledFs(4) & FS.IOCTL_DEV, 0);
    assert.equal(handledFs(5) & FS.IOCTL_DEV, FS.IOCTL_DEV);
    assert.deepEqual([3, 4].map(handledNet), [0, 3]);
    assert.deepEqual([5, 6, 7].map(handledScopes), [0, 3, 3]);
    assert.deepEqual([1, 3, 4, 5, 6, 7].map(rulesetAttrSize), [8, 8, 16, 16, 24, 24]);
  });

  for (const abi of [1, 2, 3, 4, 5, 6, 7]) {
    it(`ABI ${abi}: no rule asks for a right the kernel does not handle`, () => {
      const plan = planLandlock(
        [{ path: "/", level: "read" }, { path: "/tmp", level: "write" }],
        abi,
        tree(HOME),
      );
      assert.equal(plan.handledFs, handledFs(abi));
      for (const r of plan.rules) assert.equal(r.access & ~handledFs(abi), 0);
    });
  }
});

describe("planLandlock: a property over generated trees and policies", () => {
  const seg = fc.constantFrom("a", "b", "c", ".s", "d");
  const pathArb = fc.array(seg, { minLength: 1, maxLength: 4 }).map((s) => "/" + s.join("/"));
  const seed = process.env.HERMIT_FC_SEED ? Number(process.env.HERMIT_FC_SEED) : undefined;

  it("every existing path gets its deepest line's access (listing aside)", () => {
    fc.assert(
      fc.property(
        fc.array(pathArb, { minLength: 1, maxLength: 25 }),
        fc.array(fc.tuple(pathArb, fc.constantFrom<Level>("deny", "read", "write")), { maxLength: 6 }),
        fc.constantFrom<Level>("read", "deny", "write"),
        (files, lines, root) => {
          const fs = tree(files);
          const rules: FsRule[] = [{ path: "/", level: root }];
          const seen = new Set(["/"]);
          for (const [p, level] of lines) if (!seen.has(p)) (seen.add(p), rules.push({ path: p, level }));
          const abi = 7;
          const plan = planLandlock(rules, abi, fs);
          const want = { deny: 0, read: READ_RIGHTS, write: handledFs(abi) };
          const rank = { deny: 0, read: 1, write: 2 };
          for (const p of fs.files) {
            const why = `${p} in ${JSON.stringify(rules)}`;
            const expected = want[deepest(rules, p)];
            const got = granted(plan, p);
            if (!fs.isDir(p)) {
              // a file: exactly its line's rights
              assert.equal(got & FILE_RIGHTS, expected & FILE_RIGHTS, why);
              continue;
            }
            // a directory: its own rights (making and removing entries, listing) are its line's,
            // except on the way to a narrower path, where only listing is left
            const dirRights = handledFs(abi) & ~FILE_RIGHTS & ~FS.READ_DIR;
            const narrowed = rules.some((r) =>
              r.path !== p && within(r.path, p) && rank[deepest(rules, r.path)] < rank[deepest(rules, p)]
            );
            assert.equal(got & dirRights, narrowed ? 0 : expected & dirRights, why);
            if (deepest(rules, p) !== "deny") assert.equal(got & FS.READ_DIR, FS.READ_DIR, why);
          }
        },
      ),
      { numRuns: 300, ...(seed === undefined ? {} : { seed }) },
    );
  });
});

describe("which protected paths a mount covers", () => {
  it("those inside a writable path, unless something inside them is re-opened", () => {
    assert.deepEqual(
      coveredByWrite([
        { path: "/", level: "read" },
        { path: "/home/u", level: "write" },
        { path: "/home/u/.ssh", level: "deny" },
        { path: "/home/u/.ssh/known_hosts", level: "read" },
        { path: "/home/u/.aws", level: "deny" },
        { path: "/etc/shadow", level: "deny" },
      ]),
      [{ path: "/home/u/.aws", level: "deny" }],
    );
  });

  it("a read-only path inside a writable one too (a read-only mount of itself), unless a writable one is inside it", () => {
    const rules: FsRule[] = [
      { path: "/", level: "read" },
      { path: "/work/p", level: "write" },
      { path: "/work/p/tools/hermit.yaml", level: "read", soft: true },
      { path: "/work/p/ref", level: "read" },
      { path: "/work/p/ref/out", level: "write" },
      { path: "/etc/hermit.yaml", level: "read" },
    ];
    assert.deepEqual(coveredByWrite(rules), [rules[2]]);
  });

  it("an agent's socket is covered by a mount wherever it is (Landlock does not govern connect)", () => {
    const rules: FsRule[] = [
      { path: "/", level: "read" },
      { path: "/tmp/ssh-abc", level: "deny", socket: true },
      { path: "/home/u/.aws", level: "deny" },
    ];
    assert.deepEqual(coveredByWrite(rules), [rules[1]]);
  });

  it("the directories between a read-only path and the writable one it lies in are pinned, outermost first", () => {
    const rules: FsRule[] = [
      { path: "/", level: "read" },
      { path: "/work/p", level: "write" },
      { path: "/work/p/adapters/notes/hermit.yaml", level: "read", soft: true },
      { path: "/work/p/adapters/notes/hermit.lock", level: "read", soft: true },
      { path: "/work/p/shared/.serve", level: "deny" },
      { path: "/work/p/hermit.yaml", level: "read", soft: true },
    ];
    assert.deepEqual(pinnedDirs(rules, coveredByWrite(rules)), [
      "/work/p/adapters",
      "/work/p/adapters/notes",
    ]);
    // a writable path nested in another can itself be moved aside: pinned too
    for (const inner of ["/work/p/adapters", "/work/p/adapters/notes"]) {
      const nested: FsRule[] = [...rules, { path: inner, level: "write" }];
      assert.deepEqual(pinnedDirs(nested, coveredByWrite(nested)), [
        "/work/p/adapters",
        "/work/p/adapters/notes",
      ]);
    }
  });

  it("a hidden read-only path leaves its writable directory whole for Landlock (the mount keeps it read-only)", () => {
    const rules: FsRule[] = [
      { path: "/", level: "read" },
      { path: "/home/u/proj", level: "write" },
      { path: "/home/u/proj/hermit.yaml", level: "read" },
    ];
    const fs = tree([...HOME, "/home/u/proj/hermit.yaml"]);
    const mounted = planLandlock(rules, 5, fs, (p) => p === "/home/u/proj/hermit.yaml");
    assert.deepEqual(mounted.hidden, ["/home/u/proj/hermit.yaml"]);
    assert.deepEqual(mounted.narrowed, []);
    const unmounted = planLandlock(rules, 5, fs);
    assert.deepEqual(unmounted.narrowed, ["/home/u/proj"], "without the mount, Landlock narrows around it");
  });
});
