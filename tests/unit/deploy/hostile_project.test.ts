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
import { parseDocument } from "yaml";
import { HermitError } from "../../../src/errors.ts";
import { renderReport } from "../../../src/deploy/report.ts";
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
      await rejects(deploy(s, { hosts: ["claude"] }), 1, /deployed\.json is not a hermit deploy record/);
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
  it("an item for a file named like Object's members (constructor) is removed, not a crash", async () => {
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
      // before, files["constructor"] was Object's constructor: "error: unexpected", exit 1
      await deploy(s, { remove: true });
      assert.equal(JSON.parse(readFileSync(path.join(s.project, "constructor"), "utf8")).a, undefined);
      assert.equal(existsSync(recordFile), false, "nothing of hermit's is left on record");
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

describe("a record item naming the whole document ([] as a key path)", () => {
  const recordOf = (dir: string) => path.join(dir, "deployed.json");
  /** Deploy, edit the record with `edit`, and expect the removal refused, nothing written. */
  async function refused(
    s: ReturnType<typeof sandbox>,
    scope: "project" | "user",
    host: string,
    edit: (r: { items: { path?: string[] }[]; files: Record<string, { containers: string[][] }> }) => void,
    field: string,
  ): Promise<void> {
    await deploy(s, { scope, hosts: [host] });
    const dir = scope === "project"
      ? path.join(s.project, ".hermit")
      : path.join(s.env.HERMIT_HOME, "convert");
    const record = JSON.parse(readFileSync(recordOf(dir), "utf8"));
    edit(record);
    writeFileSync(recordOf(dir), JSON.stringify(record));
    const where = scope === "project" ? s.project : s.home;
    const before = snapshot(where, []);
    const re = new RegExp(
      `^\\S+deployed\\.json is not a hermit deploy record \\(${
        field.replace(/[.[\]]/g, "\\$&")
      } is \\[\\], the whole document; hermit records only keys inside it\\); repair it, or delete it \\(`,
    );
    for (const dryRun of [true, false]) await rejects(deploy(s, { scope, remove: true, dryRun }), 1, re);
    assert.deepEqual(snapshot(where, []), before, "nothing written");
  }

  it('a container [] in a JSON file\'s record is refused, not a removal that leaves {"mcpServers": {}} behind', async () => {
    const s = sandbox();
    try {
      // before: exit 0, "removed MCP server notes from .mcp.json", "nothing hermit wrote is left
      // here", and the .mcp.json hermit had created stayed, holding {"mcpServers": {}}
      await refused(s, "project", "claude", (r) => {
        r.files[".mcp.json"].containers = [[]];
      }, 'files[".mcp.json"].containers[0]');
    } finally {
      s.cleanup();
    }
  });

  it("an entry whose path is [] is refused, not reported removed while the file keeps it", async () => {
    const s = sandbox();
    try {
      await refused(s, "project", "claude", (r) => {
        r.items[0].path = [];
      }, "items[0].path");
    } finally {
      s.cleanup();
    }
  });

  it("in a YAML file (convert, Hermes) both are refused, not 'error: unexpected'", async () => {
    for (const edit of ["container", "path"]) {
      const s = sandbox();
      try {
        await refused(
          s,
          "user",
          "hermes",
          (r) => {
            if (edit === "path") r.items[0].path = [];
            else r.files[".hermes/config.yaml"].containers.push([]);
          },
          edit === "path" ? "items[0].path" : 'files[".hermes/config.yaml"].containers[1]',
        );
      } finally {
        s.cleanup();
      }
    }
  });
});

describe("a record's interiors (the text of an emptied {}) put back on removal", () => {
  /** Deploy into the user's own file, set the record's interior of `key` to `text`, remove. */
  async function removeWithInterior(
    s: ReturnType<typeof sandbox>,
    scope: "project" | "user",
    file: string,
    key: string,
    text: string,
  ): Promise<string> {
    const host = scope === "project" ? "claude" : "hermes";
    await deploy(s, { scope, hosts: [host] });
    const recordFile = scope === "project"
      ? path.join(s.project, ".hermit", "deployed.json")
      : path.join(s.env.HERMIT_HOME, "convert", "deployed.json");
    const record = JSON.parse(readFileSync(recordFile, "utf8"));
    assert.ok(key in record.files[file].interiors, "hermit noted the {} it filled");
    record.files[file].interiors[key] = text;
    writeFileSync(recordFile, JSON.stringify(record));
    await deploy(s, { scope, remove: true });
    return readFileSync(path.join(scope === "project" ? s.project : s.home, file), "utf8");
  }

  it("JSON: one that is not blank is not spliced in (it wrote invalid JSON into the user's file)", async () => {
    const s = sandbox();
    try {
      writeFileSync(path.join(s.project, ".mcp.json"), '{"mcpServers": {}, "mine": 1}\n');
      // before: {"mcpServers": {"x": 1, oops}, "mine": 1}, reported "removed MCP server notes"
      const text = await removeWithInterior(s, "project", ".mcp.json", "mcpServers", '"x": 1, oops');
      assert.deepEqual(JSON.parse(text), { mcpServers: {}, mine: 1 });
    } finally {
      s.cleanup();
    }
  });

  it("YAML: one that is not that key's {} is not put back (it wrote invalid YAML, or a key of its own)", async () => {
    for (const planted of ["mcp_servers: [oops", "mcp_servers: {}\nplanted: 1", "other: {}"]) {
      const s = sandbox();
      try {
        mkdirSync(path.join(s.home, ".hermes"));
        writeFileSync(path.join(s.home, ".hermes", "config.yaml"), "model: x\nmcp_servers: {}\n");
        const text = await removeWithInterior(s, "user", ".hermes/config.yaml", "mcp_servers", planted);
        const doc = parseDocument(text);
        assert.deepEqual(doc.errors, [], `${planted}: ${text}`);
        assert.deepEqual(doc.toJS(), { model: "x", mcp_servers: null }, `${planted}: ${text}`);
      } finally {
        s.cleanup();
      }
    }
  });

  it("what hermit notes is still put back byte for byte", async () => {
    const s = sandbox();
    try {
      writeFileSync(path.join(s.project, ".mcp.json"), '{"mcpServers": { }, "mine": 1}\n');
      assert.equal(
        await removeWithInterior(s, "project", ".mcp.json", "mcpServers", " "),
        '{"mcpServers": { }, "mine": 1}\n',
      );
      mkdirSync(path.join(s.home, ".hermes"));
      writeFileSync(path.join(s.home, ".hermes", "config.yaml"), "model: x\nmcp_servers: {}\n");
      assert.equal(
        await removeWithInterior(s, "user", ".hermes/config.yaml", "mcp_servers", "mcp_servers: {}"),
        "model: x\nmcp_servers: {}\n",
      );
    } finally {
      s.cleanup();
    }
  });
});

describe("a record's containers (the objects hermit added for an entry) on removal", () => {
  it("one off the removed entry's path is the user's: their {} and null stay", async () => {
    const s = sandbox();
    try {
      const mine =
        '{\n  "keep": {},\n  "nul": null,\n  "mcpServers": {\n    "mine": { "command": "x" }\n  }\n}\n';
      writeFileSync(path.join(s.project, ".mcp.json"), mine);
      mkdirSync(path.join(s.home, ".hermes"));
      const yaml = "keep: {}\nnul:\nmcp_servers:\n  mine:\n    command: x\n";
      writeFileSync(path.join(s.home, ".hermes", "config.yaml"), yaml);
      await deploy(s, { hosts: ["claude"] });
      await deploy(s, { scope: "user", hosts: ["hermes"] });
      for (
        const recordFile of [
          path.join(s.project, ".hermit", "deployed.json"),
          path.join(s.env.HERMIT_HOME, "convert", "deployed.json"),
        ]
      ) {
        const record = JSON.parse(readFileSync(recordFile, "utf8"));
        for (const f of Object.values(record.files) as { containers: string[][] }[]) {
          f.containers = [["keep"], ["nul"]];
        }
        writeFileSync(recordFile, JSON.stringify(record));
      }
      // before: both were deleted as emptied containers of hermit's
      await deploy(s, { remove: true });
      await deploy(s, { scope: "user", remove: true });
      assert.equal(readFileSync(path.join(s.project, ".mcp.json"), "utf8"), mine);
      assert.equal(readFileSync(path.join(s.home, ".hermes", "config.yaml"), "utf8"), yaml);
    } finally {
      s.cleanup();
    }
  });
});

describe("a file hermit created whose record misses the container it added", () => {
  /** Deploy into a fresh file, set its record's containers, remove; the report's text. */
  async function removeWith(
    s: ReturnType<typeof sandbox>,
    scope: "project" | "user",
    containers: string[][],
    edit?: (file: string) => void,
  ): Promise<string> {
    const [host, file] = scope === "project" ? ["claude", ".mcp.json"] : ["hermes", ".hermes/config.yaml"];
    await deploy(s, { scope, hosts: [host] });
    const recordFile = scope === "project"
      ? path.join(s.project, ".hermit", "deployed.json")
      : path.join(s.env.HERMIT_HOME, "convert", "deployed.json");
    const record = JSON.parse(readFileSync(recordFile, "utf8"));
    assert.equal(record.files[file].created, true);
    record.files[file].containers = containers;
    writeFileSync(recordFile, JSON.stringify(record));
    edit?.(path.join(scope === "project" ? s.project : s.home, file));
    return renderReport(await deploy(s, { scope, remove: true }));
  }

  for (
    const [label, containers] of [
      ["none", []],
      ["one of a different type", [["mcpServers", "notes", "command"], ["mcp_servers", "notes", "command"]]],
      ["a deep path not in the file", [["a", "b", "c", "d", "e", "f"]]],
    ] as const
  ) {
    it(`(${label}): the file goes when only empty objects are left, and the report says so`, async () => {
      for (const scope of ["project", "user"] as const) {
        const s = sandbox();
        try {
          // before: {"mcpServers": {}} (JSON) or "mcp_servers:" (YAML) stayed, and the report said
          // "removed MCP server notes from .mcp.json" and "nothing hermit wrote is left here"
          const text = await removeWith(s, scope, containers.map((c) => [...c]));
          const shown = scope === "project" ? ".mcp.json" : "~/.hermes/config.yaml";
          assert.ok(text.includes(`  removed MCP server notes and ${shown} (hermit had created it)\n`), text);
          assert.deepEqual([...snapshot(scope === "project" ? s.project : s.home, []).keys()], []);
        } finally {
          s.cleanup();
        }
      }
    });
  }

  it("what the user added to it (a value, a comment) keeps it, and the report does not say it went", async () => {
    const edits: [string, string, (t: string) => string][] = [
      ["project", "a value", (t) => t.replace('"mcpServers": {', '"mine": [],\n  "mcpServers": {')],
      ["project", "a comment", (t) => "// mine\n" + t],
      ["user", "a comment", (t) => t + "# mine\n"],
      ["user", "a value", (t) => "model: x\n" + t],
    ];
    for (const [scope, label, edit] of edits) {
      const s = sandbox();
      try {
        const text = await removeWith(
          s,
          scope as "project",
          [],
          (f) => writeFileSync(f, edit(readFileSync(f, "utf8"))),
        );
        assert.match(text, /^ {2}removed MCP server notes from \S+$/m, `${scope} ${label}: ${text}`);
        assert.equal(snapshot(scope === "project" ? s.project : s.home, []).size, 1, `${scope} ${label}`);
      } finally {
        s.cleanup();
      }
    }
  });
});
