/**
 * What a removal does with each part of a deploy record that a project or a hand may have put
 * there: key paths (`[]`, the whole document, is refused in one line naming the record and the
 * field), the `{}` text put back (only what hermit notes), containers (only those on the removed
 * entry's path), a file hermit created (gone when only empty objects are left), and an entry
 * hermit cannot take out as it is written (left, and said so). Each either does what the report
 * says or is refused before anything is written.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseDocument } from "yaml";
import { HermitError } from "../../../src/errors.ts";
import { renderReport } from "../../../src/deploy/report.ts";
import type { Json } from "../../../src/hosts/edit/json.ts";
import { readToml, tomlValue } from "../../../src/hosts/edit/toml.ts";
import { readYaml } from "../../../src/hosts/edit/yaml.ts";
import { deploy, sandbox, snapshot } from "../../helpers/deploy.ts";

async function rejects(p: Promise<unknown>, code: number, re: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof HermitError, String(err));
    assert.equal(err.exitCode, code, err.message);
    assert.match(err.message, re);
    return true;
  });
}
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
    for (const dryRun of [true, false]) await rejects(deploy(s, { scope, remove: true, dryRun }), 2, re);
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

describe("an entry hermit cannot take out as it is written (the user rewrote its form)", () => {
  /** Convert into `host`, rewrite `file` with `rewrite(value of the entry)`, remove (and --force). */
  async function rewrittenThenRemoved(
    host: string,
    file: string,
    rewrite: (v: Json) => string,
  ): Promise<void> {
    const s = sandbox();
    try {
      await deploy(s, { scope: "user", hosts: [host] });
      const abs = path.join(s.home, file);
      const read = file.endsWith(".yaml") ? readYaml : readToml;
      const found = read(readFileSync(abs, "utf8"), ["mcp_servers", "notes"]);
      assert.ok(found.found);
      const mine = rewrite(found.value as Json);
      writeFileSync(abs, mine);
      for (const force of [false, true]) {
        // before: YAML lost the whole line (the user's own server too); TOML was reported removed
        // and dropped from the record while the file kept it
        const text = renderReport(await deploy(s, { scope: "user", remove: true, force }));
        assert.equal(readFileSync(abs, "utf8"), mine, `--force ${force}`);
        assert.match(text, new RegExp(`^ {2}left MCP server notes in ~/${file.replace(".", "\\.")} `, "m"));
        assert.match(
          text,
          /^warning: \S+: MCP server notes: written in a form hermit does not edit, so left in place; take it out by hand$/m,
        );
        const record = JSON.parse(
          readFileSync(path.join(s.env.HERMIT_HOME, "convert", "deployed.json"), "utf8"),
        );
        assert.ok(record.items.some((i: { path?: string[] }) => i.path?.join(".") === "mcp_servers.notes"));
      }
      const byHand = file.endsWith(".yaml") ? "model: x\n" : 'model = "x"\n';
      writeFileSync(abs, byHand);
      await deploy(s, { scope: "user", remove: true }); // taken out by hand: the record forgets it
      assert.equal(readFileSync(abs, "utf8"), byHand);
      assert.equal(existsSync(path.join(s.env.HERMIT_HOME, "convert", "deployed.json")), false);
    } finally {
      s.cleanup();
    }
  }

  it("YAML: inside a flow mapping with the user's own server, nothing of that line is lost", async () => {
    await rewrittenThenRemoved(
      "hermes",
      ".hermes/config.yaml",
      (v) => `model: x\nmcp_servers: {notes: ${JSON.stringify(v)}, mine: {command: x}}\n`,
    );
  });

  it("TOML: as an inline table, it is not reported removed while the file keeps it", async () => {
    await rewrittenThenRemoved(
      "codex",
      ".codex/config.toml",
      (v) => `model = "x"\n\n[mcp_servers]\nnotes = ${tomlValue(v)}\nmine = { command = "x" }\n`,
    );
  });

  it("YAML: a deploy that changes it refuses, saying why", async () => {
    const s = sandbox();
    try {
      await deploy(s, { scope: "user", hosts: ["hermes"] });
      const abs = path.join(s.home, ".hermes", "config.yaml");
      const found = readYaml(readFileSync(abs, "utf8"), ["mcp_servers", "notes"]);
      const mine = `mcp_servers: {notes: ${
        JSON.stringify(found.found && found.value)
      }, mine: {command: x}}\n`;
      writeFileSync(abs, mine);
      // before: refused too (the edit did not read back), as 'could not write mcp_servers.notes so
      // that it reads back; edit the file by hand'
      await rejects(
        deploy(s, { scope: "user", hosts: ["hermes"], serveUrl: "http://127.0.0.1:9/mcp" }),
        2,
        /^~\/\.hermes\/config\.yaml: MCP server notes: written in a form hermit does not edit; change it by hand\nnothing was written$/,
      );
      assert.equal(readFileSync(abs, "utf8"), mine);
    } finally {
      s.cleanup();
    }
  });
});

describe("two record items for one place", () => {
  it("are refused, naming both, rather than removed and reported twice", async () => {
    const s = sandbox();
    try {
      await deploy(s, { hosts: ["claude"] });
      const recordFile = path.join(s.project, ".hermit", "deployed.json");
      const record = JSON.parse(readFileSync(recordFile, "utf8"));
      record.items.push({ ...record.items[0], owners: ["other/claude"] });
      writeFileSync(recordFile, JSON.stringify(record));
      const before = snapshot(s.project, []);
      // before: accepted; removing notes took the entry away though the record gave it to 'other'
      // too (with the same owner twice: "removed MCP server notes and .mcp.json" twice)
      await rejects(
        deploy(s, { remove: true }),
        2,
        /^\S+deployed\.json is not a hermit deploy record \(items\[4\] is for the same place in \.mcp\.json as items\[0\]\); repair it, or delete it/,
      );
      assert.deepEqual(snapshot(s.project, []), before);
    } finally {
      s.cleanup();
    }
  });
});

describe("what a record puts back as it was", () => {
  /** Deploy for Claude Code into `files`, edit the record, and expect the removal refused, nothing written. */
  async function refused(
    files: Record<string, string>,
    edit: (r: { items: { kind: string; previous?: string }[]; files: Record<string, object> }) => void,
    re: RegExp,
  ): Promise<void> {
    const s = sandbox();
    try {
      for (const [f, text] of Object.entries(files)) writeFileSync(path.join(s.project, f), text);
      await deploy(s, { hosts: ["claude"] });
      const recordFile = path.join(s.project, ".hermit", "deployed.json");
      const record = JSON.parse(readFileSync(recordFile, "utf8"));
      edit(record);
      writeFileSync(recordFile, JSON.stringify(record));
      const before = snapshot(s.project, []);
      await rejects(deploy(s, { remove: true }), 2, re);
      assert.deepEqual(snapshot(s.project, []), before, "nothing written");
    } finally {
      s.cleanup();
    }
  }

  it("a file's 'blank' that is not whitespace is refused (it was written over the emptied file)", async () => {
    // before: .mcp.json became "PWNED", reported "removed MCP server notes from .mcp.json"
    await refused(
      { ".mcp.json": "\n" },
      (r) => Object.assign(r.files[".mcp.json"], { blank: "PWNED" }),
      /^\S+deployed\.json is not a hermit deploy record \(files\["\.mcp\.json"\]\.blank is not whitespace\); repair it, or delete it/,
    );
  });

  it("a file item's 'previous' that is not base64 is refused, not 'error: unexpected'", async () => {
    await refused(
      {},
      (r) => {
        r.items.find((i) => i.kind === "file")!.previous = "!!!";
      },
      /^\S+deployed\.json is not a hermit deploy record \(items\[2\]\.previous is not base64\); repair it, or delete it/,
    );
  });
});

describe("an entry's 'previous' (what hermit replaced with --force, put back on removal)", () => {
  for (
    const [scope, host, file, mine] of [
      ["project", "claude", ".mcp.json", '{"mcpServers": {"notes": {"command": "mine"}}}\n'],
      ["user", "hermes", ".hermes/config.yaml", "mcp_servers:\n  notes:\n    command: mine\n"],
      ["user", "codex", ".codex/config.toml", '[mcp_servers.notes]\ncommand = "mine"\n'],
    ] as const
  ) {
    it(`that does not fit back in is refused, naming the record and the item (${host})`, async () => {
      const s = sandbox();
      try {
        const root = scope === "project" ? s.project : s.home;
        mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
        writeFileSync(path.join(root, file), mine);
        await deploy(s, { scope, hosts: [host], force: true });
        const recordFile = scope === "project"
          ? path.join(s.project, ".hermit", "deployed.json")
          : path.join(s.env.HERMIT_HOME, "convert", "deployed.json");
        const record = JSON.parse(readFileSync(recordFile, "utf8"));
        const n = record.items.findIndex((i: { file: string }) => i.file === file);
        assert.ok(record.items[n].previous, "hermit noted what it replaced");
        record.items[n].previous = "oops, {";
        writeFileSync(recordFile, JSON.stringify(record));
        const before = snapshot(root, []);
        // before (JSON): exit 0, "removed MCP server notes", and .mcp.json held "notes": oops, {
        await rejects(
          deploy(s, { scope, remove: true }),
          2,
          new RegExp(
            `^\\S+: MCP server notes: what hermit replaced there, as ${
              recordFile.replace(/[.]/g, "\\.")
            } notes it \\(items\\[${n}\\]\\.previous\\), does not fit back in; repair that item or delete the record; nothing was written$`,
          ),
        );
        assert.deepEqual(snapshot(root, []), before, "nothing written");
      } finally {
        s.cleanup();
      }
    });
  }
});

describe("a record's dirs (the folders hermit made for its files)", () => {
  it("one that holds none of its items is forgotten, not removed: the user's empty folders stay", async () => {
    const s = sandbox();
    try {
      await deploy(s, { hosts: ["claude"] });
      const recordFile = path.join(s.project, ".hermit", "deployed.json");
      const record = JSON.parse(readFileSync(recordFile, "utf8"));
      const mine = ["mine/empty", "mine", ".git/refs/tags"];
      for (const d of mine) mkdirSync(path.join(s.project, d), { recursive: true });
      record.dirs.push(...mine);
      writeFileSync(recordFile, JSON.stringify(record));
      // before: a deploy, and then the removal, deleted them as hermit's emptied folders
      await deploy(s, { hosts: ["claude"] });
      assert.deepEqual(JSON.parse(readFileSync(recordFile, "utf8")).dirs, record.dirs.slice(0, -3));
      await deploy(s, { remove: true });
      for (const d of mine) assert.ok(existsSync(path.join(s.project, d)), d);
      assert.equal(existsSync(path.join(s.project, ".claude")), false, "hermit's own folders go");
    } finally {
      s.cleanup();
    }
  });
});

describe("a record item whose file is a folder", () => {
  for (const file of ["", ".", ".claude"]) {
    it(`is refused naming the record and the item (file ${JSON.stringify(file)})`, async () => {
      const s = sandbox();
      try {
        await deploy(s, { hosts: ["claude"] });
        const recordFile = path.join(s.project, ".hermit", "deployed.json");
        const record = JSON.parse(readFileSync(recordFile, "utf8"));
        record.items.push({ kind: "block", id: "x", file, what: "x", owners: ["notes/claude"], hash: "0" });
        writeFileSync(recordFile, JSON.stringify(record));
        const before = snapshot(s.project, []);
        // before: "cannot read .claude (EISDIR)" (or the project's own path), not saying why
        await rejects(
          deploy(s, { remove: true }),
          2,
          new RegExp(
            `^\\S+deployed\\.json: items\\[4\\]\\.file names ${
              JSON.stringify(file).replace(/[.]/g, "\\.")
            }, a folder; hermit's items are files: take that item out of the record, or delete the record \\(`,
          ),
        );
        assert.deepEqual(snapshot(s.project, []), before, "nothing written");
      } finally {
        s.cleanup();
      }
    });
  }
});
