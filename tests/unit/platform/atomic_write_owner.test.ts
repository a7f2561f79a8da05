/**
 * hermit's atomic write of a user's file keeps more than the mode: the owner and group (a file
 * root rewrites for another user stays theirs), and a link whose target does not exist is refused,
 * not replaced by a plain file.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  chownSync,
  lstatSync,
  readdirSync,
  readlinkSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import process from "node:process";
import { DanglingLink, writeFileAtomic } from "../../../src/platform/atomic_write.ts";
import { tempDir } from "../../helpers/tmp.ts";

const posix = process.platform !== "win32";
const root = process.getuid?.() === 0;

describe("writeFileAtomic: a user's file", () => {
  it("keeps its owner and group when root rewrites it", {
    skip: !root && "only root can give a file to another user",
  }, () => {
    const tmp = tempDir();
    try {
      const file = path.join(tmp.path, ".mcp.json");
      writeFileSync(file, "{}\n", { mode: 0o600 });
      chownSync(file, 65534, 65534);
      writeFileAtomic(file, "{ }\n", { preserve: true });
      const st = statSync(file);
      assert.equal(st.uid, 65534, "owner kept");
      assert.equal(st.gid, 65534, "group kept");
      assert.equal(st.mode & 0o777, 0o600, "mode kept");
      // through a link: the target keeps its owner, the link stays a link
      const link = path.join(tmp.path, "link.json");
      symlinkSync(".mcp.json", link);
      writeFileAtomic(link, "{}\n", { preserve: true });
      assert.ok(lstatSync(link).isSymbolicLink());
      assert.equal(statSync(file).uid, 65534);
    } finally {
      tmp.cleanup();
    }
  });

  it(
    "a link to nothing is refused, naming it and its target, and kept",
    { skip: !posix && "symlinks" },
    () => {
      const tmp = tempDir();
      try {
        const link = path.join(tmp.path, ".mcp.json");
        symlinkSync("config/mcp.json", link);
        assert.throws(
          () => writeFileAtomic(link, "{}\n", { preserve: true }),
          (err: unknown) =>
            err instanceof DanglingLink && err.link === link && err.target === "config/mcp.json" &&
            err.message ===
              `${link} is a link to config/mcp.json, which does not exist: create it (or remove the link) and run again`,
        );
        assert.equal(readlinkSync(link), "config/mcp.json");
        assert.deepEqual(readdirSync(tmp.path), [".mcp.json"], "no temporary file");
      } finally {
        tmp.cleanup();
      }
    },
  );
});
