/**
 * A project's own files never make deploy write or delete outside it (the user cloned it and
 * deploys into it): a record naming paths outside the project, links in `.hermit/` (the folder,
 * the record, `.gitignore`, backups), a host file that is a link out of the project, a file that
 * is not UTF-8 (refused, never re-encoded). Each is refused with one line naming the file, and
 * nothing is written anywhere.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { HermitError } from "../../../src/errors.ts";
import { sha256 } from "../../../src/deploy/state.ts";
import { deploy, sandbox, snapshot } from "../../helpers/deploy.ts";

async function rejects(p: Promise<unknown>, code: number, re: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof HermitError, String(err));
    assert.equal(err.exitCode, code, err.message);
    assert.match(err.message, re);
    assert.doesNotMatch(err.message, /\n\s+at /, "no stack trace");
    return true;
  });
}

/** A record as an attacker would plant it, with one item for `file` (as stored). */
function plantRecord(project: string, file: string, victimBytes: string, extra: object = {}): void {
  const item = {
    kind: "file",
    file,
    what: "skill x",
    owners: ["notes/claude"],
    hash: sha256(new TextEncoder().encode(victimBytes)),
    previous: btoa("PWNED\n"),
  };
  const record = { version: 1, items: [item], files: {}, dirs: [], ...extra };
  mkdirSync(path.join(project, ".hermit"), { recursive: true });
  writeFileSync(path.join(project, ".hermit", "deployed.json"), JSON.stringify(record));
}

describe("a planted record naming paths outside the project", () => {
  for (const [label, stored] of [["absolute", "ABS"], ["..", "../victim/target"]]) {
    for (const force of [false, true]) {
      it(`is refused (${label} path${force ? ", --force" : ""}); the victim stays as it was`, async () => {
        const s = sandbox();
        try {
          const victim = path.join(s.root, "victim", "target");
          mkdirSync(path.dirname(victim));
          writeFileSync(victim, "ORIGINAL\n");
          plantRecord(s.project, stored === "ABS" ? victim : stored, force ? "unknown\n" : "ORIGINAL\n");
          const before = snapshot(s.project, []);
          await rejects(
            deploy(s, { hosts: ["claude"], force }),
            2,
            /^\S*\.hermit\/deployed\.json: items\[0\]\.file names .*victim\/target, outside the project; delete the record/,
          );
          assert.equal(readFileSync(victim, "utf8"), "ORIGINAL\n");
          assert.deepEqual([...snapshot(s.project, []).keys()], [...before.keys()], "nothing written");
        } finally {
          s.cleanup();
        }
      });
    }
  }

  it("a path through a link out of the project, in files or dirs, is refused too", async () => {
    const s = sandbox();
    try {
      mkdirSync(path.join(s.root, "victim"));
      symlinkSync(path.join(s.root, "victim"), path.join(s.project, "out"));
      plantRecord(s.project, "out/target", "x", { dirs: ["out"] });
      await rejects(
        deploy(s, { hosts: ["claude"] }),
        2,
        /items\[0\]\.file names out\/target, outside the project/,
      );
      plantRecord(s.project, "CLAUDE.md", "x", { dirs: ["../victim"] });
      await rejects(
        deploy(s, { hosts: ["claude"] }),
        2,
        /deployed\.json: dirs\[0\] names \.\.\/victim, outside/,
      );
      plantRecord(s.project, "CLAUDE.md", "x", {
        files: { "/etc/passwd": { created: true, containers: [], interiors: {} } },
      });
      await rejects(
        deploy(s, { hosts: ["claude"] }),
        2,
        /deployed\.json: files names \/etc\/passwd, outside/,
      );
      assert.ok(existsSync(path.join(s.root, "victim")));
    } finally {
      s.cleanup();
    }
  });

  it("an item of the wrong shape is refused as not a record", async () => {
    const s = sandbox();
    try {
      plantRecord(s.project, "CLAUDE.md", "x", {});
      const file = path.join(s.project, ".hermit", "deployed.json");
      const rec = JSON.parse(readFileSync(file, "utf8"));
      rec.items[0].kind = "entry";
      rec.items[0].format = "__proto__";
      writeFileSync(file, JSON.stringify(rec));
      await rejects(deploy(s, { hosts: ["claude"] }), 2, /deployed\.json is not a hermit deploy record/);
    } finally {
      s.cleanup();
    }
  });
});

describe("links in the project's .hermit folder", () => {
  it("a backup that is a link: refused, its target untouched", async () => {
    const s = sandbox();
    try {
      const victim = path.join(s.root, "authorized_keys");
      writeFileSync(victim, "ORIGINAL\n");
      writeFileSync(path.join(s.project, "CLAUDE.md"), "attacker text\n");
      mkdirSync(path.join(s.project, ".hermit", "backup"), { recursive: true });
      symlinkSync(victim, path.join(s.project, ".hermit", "backup", "CLAUDE.md"));
      await rejects(
        deploy(s, { hosts: ["claude"] }),
        2,
        /^\.hermit\/backup\/CLAUDE\.md is a symlink; hermit reads and writes its own files only directly: delete it and run again$/,
      );
      assert.equal(readFileSync(victim, "utf8"), "ORIGINAL\n");
      assert.equal(readFileSync(path.join(s.project, "CLAUDE.md"), "utf8"), "attacker text\n");
    } finally {
      s.cleanup();
    }
  });

  it("a backup folder that is a link: refused", async () => {
    const s = sandbox();
    try {
      const victimDir = path.join(s.root, "victim");
      mkdirSync(victimDir);
      writeFileSync(path.join(s.project, ".mcp.json"), "{}\n");
      mkdirSync(path.join(s.project, ".hermit"));
      symlinkSync(victimDir, path.join(s.project, ".hermit", "backup"));
      await rejects(deploy(s, { hosts: ["claude"] }), 2, /^\.hermit\/backup is a symlink;/);
      assert.deepEqual([...snapshot(victimDir, []).keys()], []);
    } finally {
      s.cleanup();
    }
  });

  for (const name of [".hermit", ".hermit/deployed.json", ".hermit/.gitignore"]) {
    it(`${name} as a link is refused before anything is read or written`, async () => {
      const s = sandbox();
      try {
        const victimDir = path.join(s.root, "victim");
        mkdirSync(victimDir);
        writeFileSync(path.join(victimDir, "planted"), "VICTIM\n");
        writeFileSync(path.join(s.project, ".mcp.json"), "{}\n");
        if (name === ".hermit") symlinkSync(victimDir, path.join(s.project, ".hermit"));
        else {
          mkdirSync(path.join(s.project, ".hermit"));
          symlinkSync(path.join(victimDir, "planted"), path.join(s.project, name));
        }
        const re = new RegExp(`^${name.replace(/\./g, "\\.")} is a symlink; `);
        await rejects(deploy(s, { hosts: ["claude"] }), 2, re);
        await rejects(deploy(s, { hosts: ["claude"], remove: true }), 2, re);
        assert.deepEqual(
          [...snapshot(victimDir, []).keys()],
          ["planted"],
          "nothing written through the link",
        );
        assert.equal(readFileSync(path.join(victimDir, "planted"), "utf8"), "VICTIM\n");
        assert.ok(lstatSync(path.join(s.project, name)).isSymbolicLink());
        assert.equal(readFileSync(path.join(s.project, ".mcp.json"), "utf8"), "{}\n");
      } finally {
        s.cleanup();
      }
    });
  }
});

describe("a project host file that is a link out of the project", () => {
  it("is refused, naming it and where it leads; the target untouched", async () => {
    const s = sandbox();
    try {
      const bashrc = path.join(s.root, "victim", "bashrc");
      mkdirSync(path.dirname(bashrc));
      writeFileSync(bashrc, "export PATH=$PATH:/opt/bin\n");
      symlinkSync("../victim/bashrc", path.join(s.project, "CLAUDE.md"));
      await rejects(
        deploy(s, { hosts: ["claude"] }),
        2,
        /^CLAUDE\.md leads to \S+victim\/bashrc, outside the project; hermit writes only inside the project: replace the link with a copy of the file$/,
      );
      assert.equal(readFileSync(bashrc, "utf8"), "export PATH=$PATH:/opt/bin\n");
      assert.equal(existsSync(path.join(s.project, ".hermit")), false, "nothing written");
    } finally {
      s.cleanup();
    }
  });

  it("a linked parent folder leading out is refused too", async () => {
    const s = sandbox();
    try {
      const elsewhere = path.join(s.root, "elsewhere");
      mkdirSync(elsewhere);
      symlinkSync(elsewhere, path.join(s.project, ".claude"));
      await rejects(
        deploy(s, { hosts: ["claude"] }),
        2,
        /^\.claude\/\S+ leads to \S+elsewhere\/\S+, outside the project/,
      );
      assert.deepEqual([...snapshot(elsewhere, []).keys()], []);
    } finally {
      s.cleanup();
    }
  });

  it("convert (the user's own files) still follows a link out of the home directory", async () => {
    const s = sandbox();
    try {
      const real = path.join(s.root, "dotfiles", "claude.json");
      mkdirSync(path.dirname(real));
      writeFileSync(real, "{}\n");
      symlinkSync(real, path.join(s.home, ".claude.json"));
      await deploy(s, { scope: "user", hosts: ["claude"] });
      assert.ok(lstatSync(path.join(s.home, ".claude.json")).isSymbolicLink());
      assert.match(readFileSync(real, "utf8"), /"notes"/);
      await deploy(s, { scope: "user", hosts: ["claude"], remove: true });
      assert.equal(readFileSync(real, "utf8"), "{}\n");
    } finally {
      s.cleanup();
    }
  });
});

describe("a file that is not UTF-8", () => {
  for (const [host, name] of [["codex", "AGENTS.md"], ["claude", "CLAUDE.md"]]) {
    it(`${name} with a Latin-1 byte is refused, not re-encoded (${host})`, async () => {
      const s = sandbox();
      try {
        const latin1 = new Uint8Array([...new TextEncoder().encode("# Notes\ncaf"), 0xe9, 0x0a]);
        writeFileSync(path.join(s.project, name), latin1);
        await rejects(
          deploy(s, { hosts: [host] }),
          2,
          new RegExp(
            `^${name.replace(".", "\\.")}: not UTF-8 text \\(line 2\\); [^\\n]*nothing was written$`,
          ),
        );
        assert.deepEqual(new Uint8Array(readFileSync(path.join(s.project, name))), latin1);
        assert.equal(existsSync(path.join(s.project, ".hermit")), false);
      } finally {
        s.cleanup();
      }
    });
  }
});

describe("a record's keys are its own, never Object's", () => {
  it("an item for a file named like Object's members (constructor) is refused in one line, not a crash", async () => {
    const s = sandbox();
    try {
      await deploy(s, { hosts: ["claude"] });
      const recordFile = path.join(s.project, ".hermit", "deployed.json");
      const record = JSON.parse(readFileSync(recordFile, "utf8"));
      writeFileSync(path.join(s.project, "constructor"), '{"a": 1}\n');
      record.items.push({
        kind: "entry",
        file: "constructor",
        format: "json",
        path: ["a"],
        what: "x",
        owners: ["notes/claude"],
        hash: sha256(new TextEncoder().encode("1")),
      });
      writeFileSync(recordFile, JSON.stringify(record));
      // before, files["constructor"] was Object's constructor: "error: unexpected", exit 1; no
      // host keeps an entry in a file of that name, so the record is refused (record_places.test.ts)
      await rejects(deploy(s, { remove: true }), 2, /items\[\d+\] is for "constructor", where no host keeps/);
      assert.equal(JSON.parse(readFileSync(path.join(s.project, "constructor"), "utf8")).a, 1);
    } finally {
      s.cleanup();
    }
  });

  it("an adapter named constructor deploys where the record has another adapter", async () => {
    const s = sandbox();
    try {
      await deploy(s, { hosts: ["claude"] });
      const other = path.join(s.root, "constructor");
      mkdirSync(other);
      writeFileSync(
        path.join(other, "hermit.yaml"),
        "name: constructor\nexports: { tools: [hi] }\ntools:\n  hi: { description: Says hi, run: [echo, hi] }\n",
      );
      // before, adapters["constructor"] was Object's constructor: "deployed from function Object()…"
      await deploy(s, { adapter: other, hosts: ["claude"] });
      const record = JSON.parse(readFileSync(path.join(s.project, ".hermit", "deployed.json"), "utf8"));
      assert.equal(record.adapters.constructor, other);
    } finally {
      s.cleanup();
    }
  });
});
