/**
 * hermit's one atomic-write helper: a new inode each time, the given mode whatever the umask for
 * private files, the old mode and the symlink kept for users' files, writes continued until whole,
 * and on any failure (a write that fails part-way, a write that stops, a real file-size limit, a
 * rename that fails) no temporary file left behind and the old file as it was.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  statSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import path from "node:path";
import process from "node:process";
import { type AtomicIo, ShortWrite, writeFileAtomic } from "../../../src/platform/atomic_write.ts";
import { writeAtomic } from "../../../src/hosts/files.ts";
import { bunPath, root } from "../../helpers/hermit.ts";
import { tempDir } from "../../helpers/tmp.ts";

const posix = process.platform !== "win32";

describe("writeFileAtomic", () => {
  it("replaces files atomically: a new inode, no temp file left, the old file kept on failure", () => {
    const tmp = tempDir();
    try {
      const file = path.join(tmp.path, "f.json");
      writeFileAtomic(file, "one");
      const ino = statSync(file).ino;
      writeFileAtomic(file, "two");
      assert.equal(readFileSync(file, "utf8"), "two");
      assert.notEqual(statSync(file).ino, ino, "replaced by rename, not rewritten in place");
      assert.deepEqual(readdirSync(tmp.path), ["f.json"]);
      // the rename fails (the target is a non-empty directory): the temp file goes, the rest stays
      const dir = path.join(tmp.path, "d");
      mkdirSync(dir);
      writeFileSync(path.join(dir, "inside"), "");
      assert.throws(() => writeFileAtomic(dir, "x"));
      assert.deepEqual(readdirSync(tmp.path).sort(), ["d", "f.json"]);
      assert.equal(readFileSync(file, "utf8"), "two");
    } finally {
      tmp.cleanup();
    }
  });

  it("writes mode 0600 by default, or the mode it is given, whatever the file had", { skip: !posix }, () => {
    const tmp = tempDir();
    try {
      const file = path.join(tmp.path, "f");
      writeFileSync(file, "old", { mode: 0o644 });
      writeFileAtomic(file, "new");
      assert.equal(statSync(file).mode & 0o777, 0o600);
      writeFileAtomic(file, new TextEncoder().encode("bytes"), { mode: 0o640 });
      assert.equal(statSync(file).mode & 0o777, 0o640);
      assert.equal(readFileSync(file, "utf8"), "bytes");
    } finally {
      tmp.cleanup();
    }
  });
});

/** Real writes of at most `chunk` bytes each; from `failAfter` bytes on, each write throws `fail`. */
function limitedIo(chunk: number, failAfter = Infinity): AtomicIo {
  let written = 0;
  return {
    writeSync: (fd, data, offset, length) => {
      if (written >= failAfter) {
        throw Object.assign(new Error("ENOSPC: no space left on device"), { code: "ENOSPC" });
      }
      const n = writeSync(fd, data, offset, Math.min(chunk, length));
      written += n;
      return n;
    },
    fsyncSync: () => {},
    renameSync,
  };
}

describe("writeFileAtomic: failures leave nothing behind", () => {
  const content = new TextEncoder().encode("x".repeat(100_000));

  it("short writes are continued until the whole content is written", () => {
    const tmp = tempDir();
    try {
      const file = path.join(tmp.path, "f");
      writeFileAtomic(file, content, { io: limitedIo(4096) });
      assert.equal(statSync(file).size, content.length);
    } finally {
      tmp.cleanup();
    }
  });

  for (
    const [what, io] of [
      ["a write that fails part-way (ENOSPC)", limitedIo(4096, 50_000)],
      ["a write that makes no progress", { ...limitedIo(4096), writeSync: () => 0 }],
      ["an fsync that fails (EIO)", {
        ...limitedIo(1 << 20),
        fsyncSync: () => {
          throw Object.assign(new Error("EIO: i/o error"), { code: "EIO" });
        },
      }],
    ] as const
  ) {
    it(`${what}: an error, the old file intact, no temporary file (private and users' files)`, () => {
      const tmp = tempDir();
      try {
        const file = path.join(tmp.path, "settings.json");
        writeFileSync(file, "old");
        for (const preserve of [false, true]) {
          assert.throws(() => writeFileAtomic(file, content, { io, preserve }));
          assert.deepEqual(readdirSync(tmp.path), ["settings.json"]);
          assert.equal(readFileSync(file, "utf8"), "old");
        }
      } finally {
        tmp.cleanup();
      }
    });
  }

  it("a write that stops says how far it got", () => {
    const tmp = tempDir();
    try {
      const io = {
        ...limitedIo(4096),
        writeSync: (
          fd: number,
          d: Uint8Array,
          o: number,
          l: number,
        ) => (o ? 0 : writeSync(fd, d, o, Math.min(10, l))),
      };
      assert.throws(
        () => writeFileAtomic(path.join(tmp.path, "f"), content, { io }),
        (err: unknown) => err instanceof ShortWrite && /stopped after 10 of 100000 bytes/.test(err.message),
      );
    } finally {
      tmp.cleanup();
    }
  });

  // a real limit: RLIMIT_FSIZE makes the kernel write only part, then fail with EFBIG (Bun ignores
  // SIGXFSZ, as Node does, so the writes return instead of killing the process)
  const bun = bunPath();
  it("under a real file-size limit, deploy's writer leaves the user's file whole and no .tmp", {
    skip: (!bun || process.platform === "win32") && "needs bun and ulimit",
  }, () => {
    const tmp = tempDir();
    try {
      const file = path.join(tmp.path, "settings.json");
      writeFileSync(file, '{ "old": true }\n');
      const script = path.join(tmp.path, "write.ts");
      writeFileSync(
        script,
        `import { writeAtomic } from ${JSON.stringify(path.join(root, "src", "hosts", "files.ts"))};\n` +
          `try { writeAtomic(${
            JSON.stringify(file)
          }, new Uint8Array(100_000).fill(120)); console.log("written"); }\n` +
          `catch (e) { console.log("failed: " + e.message); }\n`,
      );
      const r = spawnSync("bash", ["-c", `ulimit -f 10 && exec "$0" "$1"`, bun!, script], {
        encoding: "utf8",
      });
      assert.match(r.stdout, /^failed: /, r.stdout + r.stderr);
      assert.deepEqual(readdirSync(tmp.path).sort(), ["settings.json", "write.ts"]);
      assert.equal(readFileSync(file, "utf8"), '{ "old": true }\n');
    } finally {
      tmp.cleanup();
    }
  });
});

describe("writeFileAtomic for users' files (preserve)", { skip: !posix }, () => {
  it("keeps the file's mode, writes through a symlink, and gives a new file the umask's mode", () => {
    const tmp = tempDir();
    try {
      const real = path.join(tmp.path, "real.json");
      writeFileSync(real, "old", { mode: 0o640 });
      const link = path.join(tmp.path, "link.json");
      symlinkSync(real, link);
      writeAtomic(link, new TextEncoder().encode("new"));
      assert.ok(lstatSync(link).isSymbolicLink(), "the link is still a link");
      assert.equal(readlinkSync(link), real);
      assert.equal(readFileSync(real, "utf8"), "new");
      assert.equal(statSync(real).mode & 0o777, 0o640);
      const fresh = path.join(tmp.path, "a", "b", "new.json");
      assert.deepEqual(writeAtomic(fresh, new TextEncoder().encode("x")), [
        path.join(tmp.path, "a"),
        path.join(tmp.path, "a", "b"),
      ]);
      const umask = process.umask();
      assert.equal(statSync(fresh).mode & 0o777, 0o644 & ~umask);
    } finally {
      tmp.cleanup();
    }
  });
});
