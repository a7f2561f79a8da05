/**
 * Gate 1 over whole manifests: every file of the hostile corpus (tests/fixtures/hostile) is
 * refused exactly where and how its `# expect:` line says, and nothing else in it is; benign
 * manifests (the examples, the DESIGN.md example) raise no refusal; the refusal line has the
 * documented shape.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { refusalLine, screenManifest, screenUpstream } from "../../../src/gates/screen_manifest.ts";
import { loadManifest, parseManifest } from "../../../src/manifest/load.ts";
import { examples, fixtures } from "../../helpers/hermit.ts";

const hostileDir = path.join(fixtures, "hostile");
const corpus = readdirSync(hostileDir).filter((f) => f.endsWith(".yaml")).sort();

describe("screenManifest: the hostile corpus", () => {
  it("holds every shape, wrapped variants, PowerShell, absolute shell paths and unreadable payloads", () => {
    assert.ok(corpus.length >= 50, `only ${corpus.length} hostile manifests`);
    for (
      const prefix of ["ioc-", "egress-", "wrap-", "abs-", "powershell-", "pwsh-", "persist-", "opaque-"]
    ) {
      assert.ok(corpus.some((f) => f.startsWith(prefix)), `no ${prefix}* file`);
    }
    const readme = readFileSync(path.join(hostileDir, "README.md"), "utf8");
    for (const f of corpus) assert.ok(readme.includes(`\`${f}\``), `README.md does not list ${f}`);
  });

  for (const file of corpus) {
    it(`refuses ${file}`, () => {
      const text = readFileSync(path.join(hostileDir, file), "utf8");
      const expect = /^# expect: (\S+): (ioc|egress|persistence|opaque)$/m.exec(text);
      assert.ok(expect, `${file} has no '# expect: <where>: <shape>' line`);
      const { manifest } = parseManifest(text, path.join(hostileDir, file), hostileDir);
      const refusals = screenManifest(manifest);
      assert.deepEqual(
        refusals.map((r) => [r.where, r.shape]),
        [[expect[1], expect[2]]],
        JSON.stringify(refusals),
      );
      assert.match(refusalLine(refusals[0]), new RegExp(`^refused: ${expect[1].replace(".", "\\.")}: \\S`));
    });
  }
});

describe("screenManifest: benign manifests", () => {
  it("refuses nothing in the examples and the DESIGN.md example", () => {
    for (
      const dir of [
        path.join(examples, "notes"),
        path.join(examples, "knowledge"),
        path.join(fixtures, "manifests", "design-example"),
      ]
    ) {
      assert.deepEqual(screenManifest(loadManifest(dir)), [], dir);
    }
  });
});

describe("refusalLine", () => {
  it("is one line: refused: <where>: <which shape and why>", () => {
    assert.equal(
      refusalLine({
        where: "mcp_servers.x",
        shape: "persistence",
        reason: "sh payload writes to authorized_keys",
      }),
      "refused: mcp_servers.x: sh payload writes to authorized_keys",
    );
  });
});

describe("screenUpstream: IOC anywhere in an entry", () => {
  const base = { command: "npx", args: ["-y", "server"], env: {}, headers: {}, url: undefined };
  it("env values, header values, the URL and cwd are searched", () => {
    assert.equal(screenUpstream({ ...base, env: { X: "hermes-0day" } }).refused, true);
    assert.equal(screenUpstream({ ...base, headers: { "X-A": "61.178.123.196" } }).refused, true);
    assert.equal(
      screenUpstream({ ...base, command: undefined, url: "https://118.182.244.156/mcp" }).refused,
      true,
    );
    assert.equal(screenUpstream({ ...base, cwd: "/srv/60.165.167.4" }).refused, true);
    assert.equal(screenUpstream(base).refused, false);
  });
});
