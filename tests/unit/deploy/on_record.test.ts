/**
 * Which adapter on the record a `--remove` names when its directory cannot be read: by name or by
 * the directory it was deployed from, only adapter names, and never a guess between two.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { HermitError } from "../../../src/errors.ts";
import {
  adapterOnRecord,
  hostsOnRecord,
  matchRecorded,
  recordedAdapters,
} from "../../../src/deploy/on_record.ts";
import { type DeployState, emptyState } from "../../../src/deploy/state.ts";

const cwd = path.resolve("/work");
const item = (owners: string[]) => ({ kind: "file" as const, file: "f", what: "w", owners, hash: "h" });

function record(owners: string[][], adapters?: Record<string, string>): DeployState {
  return { ...emptyState(), items: owners.map(item), ...(adapters ? { adapters } : {}) };
}

function refusal(state: DeployState, arg: string): string {
  try {
    adapterOnRecord(state, arg, cwd, { file: "/p/.hermit/deployed.json", exists: true }, `${arg}: gone`);
  } catch (err) {
    assert.ok(err instanceof HermitError);
    assert.equal(err.exitCode, 2);
    return err.message;
  }
  assert.fail("not refused");
}

describe("the adapter on record a removal names", () => {
  it("names come from owners and from the directories noted; only adapter names count", () => {
    const s = record([["notes/claude", "tools/codex"], ["../claude", "Bad/x", "noslash", "/pi"]], {
      notes: "/a/notes",
      old: "/a/old",
    });
    assert.deepEqual(recordedAdapters(s), [
      { name: "notes", dir: "/a/notes" },
      { name: "old", dir: "/a/old" },
      { name: "tools" },
    ]);
  });

  it("by name, by the directory (relative to where hermit runs), or by its hermit.yaml", () => {
    const rec = recordedAdapters(record([["x/claude"]], { x: path.join(cwd, "src", "x") }));
    for (const arg of ["x", "src/x", "./src/x/", path.join(cwd, "src", "x"), "src/x/hermit.yaml"]) {
      assert.deepEqual(matchRecorded(rec, arg, cwd).map((a) => a.name), ["x"], arg);
    }
    assert.deepEqual(matchRecorded(rec, "src", cwd), []);
  });

  it("two adapters noted from one directory (renamed and deployed again): named by their names", () => {
    const t = path.resolve("/d/t");
    const s = record([["a/claude"], ["b/claude"]], { a: t, b: t });
    assert.equal(
      refusal(s, t),
      `${t} could be either adapter on hermit's record /p/.hermit/deployed.json: 'a' (deployed from ${t}) or 'b' (deployed from ${t}); name the one to remove as a or b; nothing was written`,
    );
    assert.equal(adapterOnRecord(s, "b", cwd, { file: "r", exists: true }, "").name, "b");
  });

  it("a record's directory is shown on one line whatever it holds", () => {
    const s = record([["a/claude"]], { a: "/d/\u001b[2J\nx" });
    assert.match(
      refusal(s, "zzz"),
      /^zzz: gone, and [^\n]*'a' \(deployed from "\/d\/\\u001b\[2J\\nx"\); give/,
    );
  });
});

describe("the hosts on record a removal from all of them means", () => {
  const file = "/p/.hermit/deployed.json";
  it("the adapter's hosts, once each, in the record's order", () => {
    const s = record([["notes/gemini", "tools/codex"], ["notes/claude", "notes/gemini"]]);
    assert.deepEqual(hostsOnRecord(s, "notes", file), ["gemini", "claude"]);
    assert.deepEqual(hostsOnRecord(s, "other", file), []);
  });

  it("an owner naming a host hermit does not know: exit 2 naming the record, the item and the fix", () => {
    const refused = (s: DeployState) => {
      try {
        hostsOnRecord(s, "notes", file);
      } catch (err) {
        assert.ok(err instanceof HermitError);
        assert.equal(err.exitCode, 2);
        return err.message;
      }
      assert.fail("not refused");
    };
    const hosts = "claude, codex, hermes, pi, opencode, cursor, gemini, vscode";
    assert.equal(
      refused(record([["notes/claude"], ["tools/evil", "notes/evil"], ["notes/"]])),
      `${file}: items[1].owners has 'notes/evil', no host hermit knows (hosts: ${hosts}); take it out of that item's owners, or remove notes from the hosts hermit knows with --host claude; nothing was written`,
    );
    assert.equal(
      refused(record([["notes/a\nb"]])),
      `${file}: items[0].owners has "notes/a\\nb", no host hermit knows (hosts: ${hosts}); take it out of that item's owners; nothing was written`,
    );
  });
});
