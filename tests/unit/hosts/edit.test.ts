/**
 * The comment-preserving editors: adding an entry keeps every other byte, reads back as written,
 * and removing it gives back the original exactly — over inputs with comments, trailing commas,
 * tabs, CRLF, empty and missing containers, flow styles; a broken file is refused, not rewritten.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { type Created, readJson, removeJson, restoreJson, setJson } from "../../../src/hosts/edit/json.ts";
import { EditError } from "../../../src/hosts/edit/lines.ts";
import { readBlock, removeBlock, setBlock } from "../../../src/hosts/edit/markdown.ts";
import { readToml, removeToml, restoreToml, setToml } from "../../../src/hosts/edit/toml.ts";
import { readYaml, removeYaml, setYaml } from "../../../src/hosts/edit/yaml.ts";

const entry = { command: "/opt/hermit", args: ["serve", "/a b/notes"] };
const created = (): Created => ({ containers: [], interiors: {} });

function roundTrip(
  input: string,
  set: (t: string, c: Created) => string,
  read: (t: string) => { found: boolean; value?: unknown },
  remove: (t: string, path: string[], c: Created) => string,
  path: string[],
): string {
  const c = created();
  const out = set(input, c);
  const back = read(out);
  assert.ok(back.found, out);
  assert.deepEqual(JSON.parse(JSON.stringify(back.value)), entry);
  let text = remove(out, path, c);
  for (const container of [...c.containers].reverse()) text = remove(text, container, c);
  if (input.trim() !== "" || text.trim() !== "{\n}") {
    assert.equal(text, input, `back to the input from:\n${out}`);
  }
  return out;
}

describe("JSON / JSONC", () => {
  const inputs = [
    `{}`,
    `{}\n`,
    `{\n}\n`,
    `{\n  // comment\n  "a": 1\n}\n`,
    `{\n  "mcpServers": {\n    "x": { "command": "y" } // trailing\n  }\n}\n`,
    `{\n  "mcpServers": {}\n}\n`,
    `{\n  "mcpServers": {\n  }\n}\n`,
    `{ "a": 1, }`,
    `{ "a": 1 }`,
    `{\r\n\t"mcpServers": {\r\n\t\t"x": 1,\r\n\t},\r\n}\r\n`,
    `{"mcpServers":{"x":1}}`,
    `{\n  "mcpServers": {\n    // only a comment\n  }\n}\n`,
    // a key twice: JSON.parse and the hosts take the last one (hermit wrote into it, then read the
    // first: "could not write mcpServers.notes so that it reads back")
    `{\n  "mcpServers": {"a": {"command": "x"}},\n  "mcpServers": {"b": {"command": "y"}}\n}\n`,
    `{\n  "mcpServers": {"a": 1},\n  "mcpServers": {}\n}\n`,
  ];
  for (const input of inputs) {
    it(`adds and removes exactly: ${JSON.stringify(input)}`, () => {
      const out = roundTrip(
        input,
        (t, c) => setJson(t, ["mcpServers", "notes"], entry, c),
        (t) => readJson(t, ["mcpServers", "notes"]),
        (t, p, c) => removeJson(t, p, c.interiors),
        ["mcpServers", "notes"],
      );
      // comments stay where they were
      for (const line of input.split(/\r?\n/).filter((l) => l.includes("//"))) {
        assert.ok(out.includes(line.slice(line.indexOf("//"))), out);
      }
    });
  }

  it("replaces a value in place and restores the raw text it replaced", () => {
    const input =
      `{\n  "mcpServers": {\n    "notes": { "command": "mine" }, // keep me\n    "b": 2\n  }\n}\n`;
    const prev = readJson(input, ["mcpServers", "notes"]);
    assert.ok(prev.found);
    const out = setJson(input, ["mcpServers", "notes"], entry, created());
    assert.match(out, /\/\/ keep me/);
    assert.deepEqual(readJson(out, ["mcpServers", "b"]), { found: true, value: 2, raw: "2" });
    assert.equal(restoreJson(out, ["mcpServers", "notes"], prev.raw), input);
  });

  it("creates a whole document from nothing", () => {
    const out = setJson("", ["servers", "notes"], entry, created());
    assert.deepEqual(JSON.parse(out), { servers: { notes: entry } });
    assert.ok(out.endsWith("}\n"));
  });

  it("refuses broken JSON and non-object containers", () => {
    assert.throws(() => setJson(`{ "a": `, ["x"], entry, created()), EditError);
    assert.throws(() => setJson(`{ "mcpServers": [] }`, ["mcpServers", "n"], entry, created()), EditError);
    for (const [value, what] of [["[]", "a list"], ["null", "null"], [`"x"`, "a string"]]) {
      assert.throws(
        () => setJson(`{ "mcpServers": ${value} }`, ["mcpServers", "n"], entry, created(), ".mcp.json"),
        new RegExp(`\\.mcp\\.json: mcpServers is ${what}, not an object; make it \\{\\} or take it out`),
      );
    }
  });
});

describe("YAML", () => {
  const inputs = [
    ``,
    `# hermes config\n`,
    `model: x\n`,
    `model: x`,
    `model: x\n\n\n`,
    `model: x\nmcp_servers:\n  a:\n    command: x   # c\n    args: [1, 2]\n  # comment\n# between\nother: 1\n`,
    `mcp_servers:  # my servers\nother: 1\n`,
    `mcp_servers: {}\nother: 1\n`,
    `mcp_servers: ~\nother: 1\n`,
    `model: x\nmcp_servers: null   # none yet\n`,
    `mcp_servers: Null\r\nother: 1\r\n`,
    `mcp_servers:\n    a: {command: y}\n`,
    `mcp_servers:\r\n  a:\r\n    command: y\r\n`,
  ];
  for (const input of inputs) {
    it(`adds and removes exactly: ${JSON.stringify(input)}`, () => {
      roundTrip(
        input,
        (t, c) => setYaml(t, ["mcp_servers", "notes"], entry, c),
        (t) => readYaml(t, ["mcp_servers", "notes"]),
        (t, p, c) => removeYaml(t, p, c.interiors),
        ["mcp_servers", "notes"],
      );
    });
  }

  it("refuses a flow mapping with entries and broken YAML", () => {
    assert.throws(
      () => setYaml(`mcp_servers: {a: {command: x}}\n`, ["mcp_servers", "n"], entry, created()),
      EditError,
    );
    assert.throws(() => setYaml(`a: [\n`, ["mcp_servers", "n"], entry, created()), EditError);
  });
});

describe("TOML", () => {
  const inputs = [
    ``,
    `model = "o3"\n`,
    `model = "o3"`,
    `# codex\nmodel = "o3"\n\n[projects."/x"]\ntrust_level = "trusted" # yes\n`,
    `[mcp_servers.a]\ncommand = "x"\nargs = []\n# about b\n\n[mcp_servers.b]\nurl = "y"\n[mcp_servers.b.env]\nA = "1"\n\n# tail\n[other]\nk = 1\n`,
    `model = "o3"\r\n[x]\r\ny = 1\r\n`,
  ];
  for (const input of inputs) {
    it(`adds and removes exactly: ${JSON.stringify(input)}`, () => {
      roundTrip(
        input,
        (t) => setToml(t, ["mcp_servers", "notes"], entry),
        (t) => readToml(t, ["mcp_servers", "notes"]),
        (t, p) => removeToml(t, p),
        ["mcp_servers", "notes"],
      );
    });
  }

  it("replaces a user's table and restores it; refuses forms it does not edit", () => {
    const input =
      `[mcp_servers.notes]\ncommand = "mine" # mine\n[mcp_servers.notes.env]\nA = "1"\n\n[x]\ny = 1\n`;
    const prev = readToml(input, ["mcp_servers", "notes"]);
    assert.ok(prev.found && prev.editable);
    const out = setToml(input, ["mcp_servers", "notes"], entry);
    const back = readToml(out, ["mcp_servers", "notes"]);
    assert.ok(back.found);
    assert.deepEqual(back.value, entry);
    assert.match(out, /\[x\]\ny = 1/);
    assert.equal(restoreToml(out, ["mcp_servers", "notes"], prev.raw), input);
    assert.equal(readToml(`mcp_servers.notes.command = "x"\n`, ["mcp_servers", "notes"]).editable, false);
    assert.throws(
      () => setToml(`mcp_servers = { a = { command = "x" } }\n`, ["mcp_servers", "n"], entry),
      EditError,
    );
    assert.throws(() => setToml(`[a\n`, ["mcp_servers", "n"], entry), EditError);
    for (
      const bad of [
        () => setJson("\uFEFF{}x", ["a"], 1, { containers: [], interiors: {} }, "settings.json"),
        () => setToml("\uFEFF[a", ["b"], { c: 1 }, "config.toml"),
      ]
    ) {
      assert.throws(
        bad,
        (e: unknown) => e instanceof EditError && /byte-order mark: save it without one/.test(e.message),
      );
    }
  });
});

describe("markdown blocks", () => {
  for (const input of ["", "# Rules\n", "# Rules", "# Rules\r\n\r\nBe kind.\r\n", "a\n\n\n"]) {
    it(`adds, replaces and removes exactly: ${JSON.stringify(input)}`, () => {
      const once = setBlock(input, "notes", "# Notes\n\nline");
      assert.equal(readBlock(once, "notes"), "# Notes\n\nline");
      const twice = setBlock(once, "notes", "changed");
      assert.equal(readBlock(twice, "notes"), "changed");
      assert.equal(setBlock(twice, "notes", "changed"), twice);
      assert.equal(removeBlock(twice, "notes"), input);
    });
  }

  it("keeps other adapters' blocks and the user's text around them", () => {
    const both = setBlock(setBlock("mine\n", "a", "A"), "b", "B");
    assert.equal(removeBlock(both, "a"), setBlock("mine\n", "b", "B"));
  });

  it("a block whose end line is gone is an error naming the marker, never a second block", () => {
    const cut = setBlock("mine\n", "notes", "N").replace(/<!-- hermit:notes end -->\n/, "");
    for (
      const op of [
        () => setBlock(cut, "notes", "M"),
        () => removeBlock(cut, "notes"),
        () => readBlock(cut, "notes"),
      ]
    ) {
      assert.throws(
        op,
        (e: unknown) => e instanceof EditError && /<!-- hermit:notes end -->/.test(e.message),
      );
    }
  });
});
