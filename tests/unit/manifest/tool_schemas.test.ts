/**
 * A command tool's `input` and `output` are JSON Schemas a host must accept: an object schema
 * (`type: object`, as MCP requires), with known types. A broken one is refused at load with one
 * located line (exit 2), not sent to hosts; what only the validator finds is `check`'s problem.
 */
import assert from "node:assert/strict";
import path from "node:path";
import process from "node:process";
import { describe, it } from "node:test";
import { Exit } from "../../../src/errors.ts";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { staticFindings } from "../../../src/check/static.ts";
import {
  displayPath,
  loadManifestWithSource,
  ManifestError,
  parseManifest,
} from "../../../src/manifest/load.ts";

const FILE = path.join(process.cwd(), "hermit.yaml");
const SHOWN = displayPath(FILE);

/** A one-tool manifest whose `hello` tool has the given extra lines (indented under it). */
function manifest(...lines: string[]): string {
  return [
    "name: base",
    "exports: { tools: [hello] }",
    "tools:",
    "  hello:",
    "    description: Says hello",
    ...lines.map((l) => `    ${l}`),
    "    run: [tools/hello.sh]",
  ].join("\n") + "\n";
}

function refused(text: string): string {
  try {
    parseManifest(text, FILE, path.dirname(FILE));
  } catch (err) {
    assert.ok(err instanceof ManifestError, `expected a ManifestError, got ${err}`);
    assert.equal(err.exitCode, Exit.usage);
    assert.ok(!/\n\s+at /.test(err.message), "no stack trace");
    return err.message;
  }
  assert.fail(`accepted:\n${text}`);
}

const accepted = (text: string) => parseManifest(text, FILE, path.dirname(FILE)).manifest;

describe("a command tool's input schema", () => {
  it("must be an object schema: properties at the top, without type: object, are refused", () => {
    const msg = refused(manifest("input: { name: { type: string } }"));
    assert.match(msg, new RegExp(`^${SHOWN}:6:12: tools\\.hello\\.input must have type: object`));
    assert.match(msg, /under properties:/);
    assert.equal(msg.split("\n").length, 1);
  });

  it("a misspelled top-level type is refused at the type", () => {
    const msg = refused(manifest("input: { type: objekt }"));
    assert.match(msg, new RegExp(`^${SHOWN}:6:20: tools\\.hello\\.input\\.type: 'objekt' must be object;`));
  });

  it("an unknown type inside is refused where it is written, with a suggestion", () => {
    const msg = refused(manifest("input: { type: object, properties: { name: { type: strng } } }"));
    assert.equal(
      msg,
      `${SHOWN}:6:56: tools.hello.input.properties.name.type: 'strng' is not a JSON Schema type; did you mean 'string'?`,
    );
  });

  it("unknown types in a list, in items and in anyOf are found too", () => {
    const msg = refused(manifest(
      "input:",
      "  type: object",
      "  properties:",
      "    tags: { type: array, items: { type: txt } }",
      "    when: { anyOf: [{ type: string }, { type: [nul, integer] }] }",
    ));
    const lines = msg.split("\n");
    assert.equal(lines.length, 2, msg);
    assert.match(
      lines[0],
      /:9:\d+: tools\.hello\.input\.properties\.tags\.items\.type: 'txt' is not a JSON Schema type; /,
    );
    assert.match(
      lines[1],
      /:10:\d+: tools\.hello\.input\.properties\.when\.anyOf\[1\]\.type\[0\]: 'nul' is not a JSON Schema type; did you mean 'null'\?/,
    );
  });

  it("properties must be a mapping of schemas (not true/false: MCP clients refuse that), required a list of names", () => {
    assert.match(
      refused(manifest("input: { type: object, properties: [name] }")),
      /: tools\.hello\.input\.properties must be a mapping of argument names to schemas/,
    );
    assert.match(
      refused(manifest("input: { type: object, properties: { name: string } }")),
      /: tools\.hello\.input\.properties\.name must be a schema, e.g. name: \{ type: string \}/,
    );
    assert.match(
      refused(manifest("input: { type: object, properties: { any: true } }")),
      /: tools\.hello\.input\.properties\.any must be a schema/,
    );
    assert.match(
      refused(manifest("input: { type: object, required: name }")),
      /: tools\.hello\.input\.required must be a list of argument names/,
    );
  });

  it("what only the validator finds (a bad pattern, a dangling $ref) loads, and is check's problem", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "hermit-tool-schema-"));
    try {
      for (
        const [input, why] of [
          [
            'input: { type: object, properties: { a: { type: string, pattern: "(" } } }',
            /regular expression/,
          ],
          [
            'input: { type: object, properties: { a: { $ref: "#/definitions/nope" } } }',
            /#\/definitions\/nope/,
          ],
        ] as const
      ) {
        accepted(manifest(input)); // a session's start compiles nothing
        writeFileSync(path.join(dir, "hermit.yaml"), manifest(input));
        const found = staticFindings(loadManifestWithSource(dir), { PATH: process.env.PATH })
          .filter((f) => f.level === "problem" && /is not a usable JSON Schema/.test(f.message));
        assert.equal(found.length, 1, input);
        assert.match(found[0].message, /^tools\.hello\.input is not a usable JSON Schema: /);
        assert.match(found[0].message, why);
        assert.match(found[0].at ?? "", /hermit\.yaml:6:\d+$/);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("good schemas load: type lists, boolean subschemas, $defs, formats, the same $id twice", () => {
    const text = manifest(
      "input:",
      "  $id: https://example.com/hello",
      "  type: object",
      "  properties:",
      "    name: { type: [string, 'null'], format: email }",
      "    list: { type: array, items: true }",
      "    who: { $ref: '#/definitions/who' }",
      "  definitions: { who: { type: object, additionalProperties: false } }",
      "  required: [name]",
      "output: { type: object, properties: { greeting: { type: string } } }",
    );
    const warn = console.warn;
    const warned: unknown[] = [];
    console.warn = (...a: unknown[]) => void warned.push(a);
    try {
      accepted(manifest("input: { type: object, properties: { a: { type: string, format: emial } } }"));
    } finally {
      console.warn = warn;
    }
    assert.deepEqual(warned, [], "ajv's warning about an unknown format is not printed");
    const m = accepted(text);
    assert.equal((m.tools.hello.inputSchema as { type: string }).type, "object");
    accepted(text); // a second load in the same process (serve remembers the manifest) still works
  });
});

describe("a command tool's output schema", () => {
  it("must be an object schema too", () => {
    assert.match(
      refused(manifest("output: { type: array, items: { type: string } }")),
      /:6:21: tools\.hello\.output\.type: 'array' must be object; /,
    );
    assert.match(
      refused(manifest("output: { type: object, properties: { n: { type: numbr } } }")),
      /: tools\.hello\.output\.properties\.n\.type: 'numbr' is not a JSON Schema type; did you mean 'number'\?/,
    );
  });
});
