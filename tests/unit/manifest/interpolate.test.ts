/**
 * Interpolation as Hermes does it (reference/hermes.md 2.1): `${VAR}` and `${env:VAR}` alike, the
 * case-sensitive context variables, every string of an entry (nested objects and arrays, keys left
 * alone), one pass, and an unset variable keeping its literal placeholder.
 */
import assert from "node:assert/strict";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import {
  contextFrom,
  interpolate,
  interpolateString,
  type InterpolationContext,
  referencedNames,
  referenceSites,
} from "../../../src/manifest/interpolate.ts";

const ctx: InterpolationContext = {
  env: { TOKEN: "t0k", EMPTY: "", HOME: "/home/env", NESTED: "${TOKEN}", DOLLAR: "a$&b$1" },
  workspaceFolder: "/work/project-x",
  userHome: "/home/me",
};

const one = (s: string) => {
  const unresolved = new Set<string>();
  return { out: interpolateString(s, ctx, unresolved), unresolved: [...unresolved] };
};

describe("interpolateString", () => {
  it("${VAR} and ${env:VAR} read the environment alike", () => {
    assert.equal(one("Bearer ${TOKEN}").out, "Bearer t0k");
    assert.equal(one("Bearer ${env:TOKEN}").out, "Bearer t0k");
    assert.equal(one("${TOKEN}-${env:TOKEN}").out, "t0k-t0k");
  });

  it("an unset variable keeps its literal placeholder and is reported without env:", () => {
    assert.deepEqual(one("x ${MISSING} y"), { out: "x ${MISSING} y", unresolved: ["MISSING"] });
    assert.deepEqual(one("${env:MISSING}"), { out: "${env:MISSING}", unresolved: ["MISSING"] });
  });

  it("a variable set to the empty string is set", () => {
    assert.deepEqual(one("[${EMPTY}]"), { out: "[]", unresolved: [] });
  });

  it("the context variables, case-sensitive", () => {
    assert.equal(one("${userHome}").out, "/home/me");
    assert.equal(one("${workspaceFolder}").out, "/work/project-x");
    assert.equal(one("${workspaceFolderBasename}").out, "project-x");
    assert.equal(one("a${pathSeparator}b${/}c").out, `a${path.sep}b${path.sep}c`);
    assert.deepEqual(one("${USERHOME}"), { out: "${USERHOME}", unresolved: ["USERHOME"] });
    assert.deepEqual(one("${WorkspaceFolder}").unresolved, ["WorkspaceFolder"]);
  });

  it("only ${…} is a reference; one pass, values inserted literally", () => {
    assert.equal(one("$TOKEN and ${} and $${TOKEN}").out, "$TOKEN and ${} and $t0k");
    assert.equal(one("${NESTED}").out, "${TOKEN}", "a value is not expanded again");
    assert.equal(one("${DOLLAR}").out, "a$&b$1", "no replacement patterns");
    assert.equal(one("${TOKEN").out, "${TOKEN");
  });
});

describe("interpolate", () => {
  it("walks nested objects and arrays, leaving keys and non-strings alone", () => {
    const input = {
      command: "${userHome}/bin/srv",
      args: ["--root", "${workspaceFolder}", ["${TOKEN}"], 3, true, null],
      env: { "${TOKEN}": "${env:TOKEN}", DEEP: { list: [{ x: "${MISSING}" }] } },
    };
    const { value, unresolved } = interpolate(input, ctx);
    assert.deepEqual(value, {
      command: "/home/me/bin/srv",
      args: ["--root", "/work/project-x", ["t0k"], 3, true, null],
      env: { "${TOKEN}": "t0k", DEEP: { list: [{ x: "${MISSING}" }] } },
    });
    assert.deepEqual(unresolved, ["MISSING"]);
    assert.equal(input.command, "${userHome}/bin/srv", "the input is not modified");
  });

  it("lists each unresolved name once, sorted", () => {
    const { unresolved } = interpolate(["${B}", "${env:A}", "${A}", "${B}"], ctx);
    assert.deepEqual(unresolved, ["A", "B"]);
  });

  it("a key named __proto__ stays a key", () => {
    const input = JSON.parse('{"__proto__": {"x": "${TOKEN}"}, "y": "1"}');
    const { value } = interpolate(input as Record<string, unknown>, ctx);
    assert.ok(Object.hasOwn(value, "__proto__"));
    assert.deepEqual(Object.keys(value), ["__proto__", "y"]);
    assert.equal(Object.getPrototypeOf(value), Object.prototype);
    assert.equal((Object.getOwnPropertyDescriptor(value, "__proto__")!.value as { x: string }).x, "t0k");
  });

  it("a plain string or number interpolates as itself", () => {
    assert.deepEqual(interpolate("${TOKEN}", ctx), { value: "t0k", unresolved: [] });
    assert.deepEqual(interpolate(5, ctx), { value: 5, unresolved: [] });
  });
});

describe("contextFrom", () => {
  it("HERMIT_WORKSPACE is the workspace when set, else the working directory", () => {
    assert.equal(contextFrom({ HERMIT_WORKSPACE: "/w" }, "/cwd").workspaceFolder, "/w");
    assert.equal(contextFrom({}, "/cwd").workspaceFolder, "/cwd");
    assert.equal(contextFrom({ HERMIT_WORKSPACE: "" }, "/cwd").workspaceFolder, "/cwd");
    assert.equal(contextFrom({}, "/cwd").userHome, os.homedir());
  });
});

describe("references", () => {
  const fields = { command: "x", args: ["${A}", "${env:B}"], env: { K: "${A} ${userHome}" }, url: "${C}" };

  it("referencedNames lists every name as written, sorted", () => {
    assert.deepEqual(referencedNames(fields), ["A", "C", "env:B", "userHome"]);
  });

  it("referenceSites points each name at the first string using it", () => {
    assert.deepEqual(referenceSites(fields), [
      { ref: "A", path: ["args", 0] },
      { ref: "env:B", path: ["args", 1] },
      { ref: "userHome", path: ["env", "K"] },
      { ref: "C", path: ["url"] },
    ]);
  });
});
