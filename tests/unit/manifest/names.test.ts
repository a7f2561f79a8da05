/**
 * Name rules, as Hermes has them (reference/hermes.md 6.1): `fnmatch.fnmatchcase` globs, the
 * include-wins tool filter over raw names, rename-then-prefix, the host's `mcp__a__t` form, and
 * "did you mean" suggestions. Expected fnmatch results were produced by CPython 3.11.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  editDistance,
  exportedName,
  exportSources,
  fnmatch,
  hostToolName,
  isGlob,
  matchesAny,
  passesFilter,
  suggest,
} from "../../../src/manifest/names.ts";
import type { Manifest, Upstream } from "../../../src/manifest/types.ts";

/** [name, pattern, fnmatch.fnmatchcase(name, pattern)] from CPython. */
const PYTHON: [string, string, boolean][] = [
  ["read_file", "read_*", true],
  ["read_file", "*", true],
  ["", "*", true],
  ["", "?", false],
  ["a", "?", true],
  ["ab", "?", false],
  ["😀", "?", true],
  ["a\nb", "a?b", true],
  ["a\nb", "a*", true],
  ["Read_file", "read_*", false],
  ["read_file", "READ_*", false],
  ["read.file", "read.file", true],
  ["readxfile", "read.file", false],
  ["a+", "a+", true],
  ["aa", "a+", false],
  ["a(b)", "a(b)", true],
  ["a|b", "a|b", true],
  ["a", "a|b", false],
  ["a$", "a$", true],
  ["^a", "^a", true],
  ["a{2}", "a{2}", true],
  ["aa", "a{2}", false],
  ["a/b", "a/b", true],
  ["a\\b", "a\\b", true],
  ["b", "[abc]", true],
  ["d", "[abc]", false],
  ["d", "[!abc]", true],
  ["a", "[!abc]", false],
  ["m", "[a-z]", true],
  ["M", "[a-z]", false],
  ["-", "[a-]", true],
  ["-", "[-a]", true],
  ["]", "[]]", true],
  ["]", "[]a]", true],
  ["a", "[]a]", true],
  ["]", "[!]a]", false],
  ["b", "[!]a]", true],
  ["[!]", "[!]", true],
  ["x", "[!]", false],
  ["[", "[", true],
  ["[a", "[a", true],
  ["a", "[z-a]", false],
  ["z", "[z-a]", false],
  ["x", "[!z-a]", true],
  ["^", "[^a]", true],
  ["b", "[^a]", false],
  ["\\", "[\\]", true],
  ["a", "[\\]", false],
  ["-", "[a-c-e]", true],
  ["d", "[a-c-e]", false],
  ["e", "[a-c-e]", true],
  ["b", "[a-c-e]", true],
  ["&", "[&&]", true],
  ["~", "[~~]", true],
  ["a*b", "a[*]b", true],
  ["axb", "a[*]b", false],
  ["a?b", "a[?]b", true],
  ["tool_1", "tool_[0-9]", true],
  ["tool_x", "tool_[0-9]", false],
  ["abc", "a**c", true],
  ["abc", "a*b*c*", true],
  ["abd", "a*b?c", false],
  ["é", "[é]", true],
  ["😀x", "?x", true],
  ["😀", "[😀]", true],
];

describe("fnmatch", () => {
  for (const [name, pattern, want] of PYTHON) {
    it(`fnmatchcase(${JSON.stringify(name)}, ${JSON.stringify(pattern)}) is ${want}`, () => {
      assert.equal(fnmatch(name, pattern), want);
    });
  }

  it("never throws, whatever the pattern", () => {
    const chars = fc.constantFrom(..."ab-]![z*?.\\^+()|{}$/é😀");
    fc.assert(
      fc.property(fc.array(chars, { maxLength: 10 }), fc.array(chars, { maxLength: 6 }), (p, n) => {
        assert.equal(typeof fnmatch(n.join(""), p.join("")), "boolean");
      }),
      { numRuns: 2000 },
    );
  });

  it("a pattern without *, ? or [ matches exactly itself", () => {
    fc.assert(
      fc.property(fc.string().filter((s) => !isGlob(s)), fc.string(), (p, n) => {
        assert.equal(fnmatch(p, p), true);
        assert.equal(fnmatch(n, p), n === p);
      }),
      { numRuns: 500 },
    );
  });

  it("isGlob is *, ? or [", () => {
    assert.equal(isGlob("read_file"), false);
    assert.equal(isGlob("read_*"), true);
    assert.equal(isGlob("a?"), true);
    assert.equal(isGlob("[ab]"), true);
    assert.equal(isGlob("a]"), false);
  });
});

describe("tool filter", () => {
  it("exact names match before globs, and only entries with glob characters are globs", () => {
    assert.equal(matchesAny("read_file", ["read_file"]), true);
    assert.equal(matchesAny("[x]", ["[x]"]), true, "exact membership first, even for a glob-looking name");
    assert.equal(matchesAny("x", ["[x]"]), true);
    assert.equal(matchesAny("write_file", ["read_*"]), false);
  });

  it("include wins over exclude", () => {
    const f = { include: ["read_*"], exclude: ["read_file"] };
    assert.equal(passesFilter("read_file", f), true);
    assert.equal(passesFilter("write_file", f), false);
  });

  it("include: [] keeps none; no include keeps all but exclude", () => {
    assert.equal(passesFilter("read_file", { include: [], exclude: [] }), false);
    assert.equal(passesFilter("read_file", { exclude: [] }), true);
    assert.equal(passesFilter("delete_all", { exclude: ["delete_*"] }), false);
    assert.equal(passesFilter("Delete_all", { exclude: ["delete_*"] }), true, "case-sensitive");
  });
});

describe("exported names", () => {
  it("rename first, then prefix (the prefix never touches a renamed tool)", () => {
    const m = { rename: { read_file: "fs_read" }, prefix: "fs_" };
    assert.equal(exportedName("read_file", m), "fs_read");
    assert.equal(exportedName("write_file", m), "fs_write_file");
    assert.equal(exportedName("x", { rename: {}, prefix: "" }), "x");
  });

  it("a raw name that is an Object.prototype member is not 'renamed' by the prototype", () => {
    assert.equal(exportedName("constructor", { rename: {}, prefix: "" }), "constructor");
    assert.equal(exportedName("toString", { rename: {}, prefix: "p_" }), "p_toString");
  });

  it("hostToolName is mcp__<server>__<tool> with [^A-Za-z0-9_] turned into _", () => {
    assert.equal(hostToolName("notes", "add_note"), "mcp__notes__add_note");
    assert.equal(hostToolName("my-notes", "add-note.v2"), "mcp__my_notes__add_note_v2");
  });
});

describe("exportSources", () => {
  const upstream = (name: string, over: Partial<Upstream>): Upstream =>
    ({ name, rename: {}, prefix: "", exclude: [], include: undefined, ...over }) as Upstream;
  const manifest = (tools: string[], exported: string[], upstreams: Upstream[]): Manifest =>
    ({
      exports: { tools: exported },
      tools: Object.fromEntries(tools.map((t) => [t, { name: t }])),
      upstreams: Object.fromEntries(upstreams.map((u) => [u.name, u])),
    }) as unknown as Manifest;

  it("finds command tools, certain includes, renames and prefixes", () => {
    const m = manifest(["add"], ["add", "read_file", "fs_read", "p_list", "anything"], [
      upstream("a", { include: ["read_file"] }),
      upstream("b", { rename: { read: "fs_read" }, include: ["read"] }),
      upstream("c", { prefix: "p_", include: ["li*"] }),
    ]);
    const s = exportSources(m);
    assert.deepEqual(s.get("add"), [{ kind: "command" }]);
    assert.deepEqual(s.get("read_file"), [{
      kind: "upstream",
      server: "a",
      raw: "read_file",
      certain: true,
    }]);
    assert.deepEqual(s.get("fs_read"), [{ kind: "upstream", server: "b", raw: "read", certain: true }]);
    assert.deepEqual(s.get("p_list"), [{ kind: "upstream", server: "c", raw: "list", certain: false }]);
    assert.deepEqual(s.get("anything"), []);
  });

  it("an export named like an Object.prototype member is not a command tool by accident", () => {
    const s = exportSources(manifest([], ["constructor", "toString"], []));
    assert.deepEqual(s.get("constructor"), []);
    assert.deepEqual(s.get("toString"), []);
  });
});

describe("suggest", () => {
  const keys = ["name", "version", "description", "exports", "tools", "mcp_servers", "serve"];
  it("offers the closest known key for a typo", () => {
    assert.equal(suggest("exprots", keys), "exports");
    assert.equal(suggest("nmae", keys), "name");
    assert.equal(suggest("Tools", keys), "tools", "case-insensitive");
    assert.equal(suggest("mcpServers", keys), "mcp_servers");
    assert.equal(suggest("servers", keys), "serve");
  });
  it("offers nothing when nothing is close", () => {
    assert.equal(suggest("zzzzzz", keys), undefined);
    assert.equal(suggest("x", []), undefined);
  });
  it("editDistance is Levenshtein", () => {
    assert.equal(editDistance("kitten", "sitting"), 3);
    assert.equal(editDistance("", "abc"), 3);
    assert.equal(editDistance("abc", "abc"), 0);
  });
});
