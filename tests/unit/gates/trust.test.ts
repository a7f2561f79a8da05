/**
 * Gate 5, trust tiers: the trust table and the folding of written values pinned literally, the
 * approval question (names server and tool, says it may modify external state), and the reading
 * of the answer: only `accept` with `approve: true` approves. Gate 7, the kill switch, too.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SAFE_MODE_NOTICE, safeMode } from "../../../src/gates/safe_mode.ts";
import {
  approvalRequest,
  foldTrust,
  needsApproval,
  readApproval,
  refusalText,
} from "../../../src/gates/trust.ts";
import { parseManifest } from "../../../src/manifest/load.ts";

describe("trust: pins", () => {
  it("the trust table: only untrusted tools without readOnlyHint: true need approval", () => {
    const table = (["full", "untrusted"] as const).flatMap((trust) =>
      [true, false, undefined, "true", 1, null].map((
        hint,
      ) => [trust, String(hint), needsApproval(trust, hint)])
    );
    assert.deepEqual(table, [
      ["full", "true", false],
      ["full", "false", false],
      ["full", "undefined", false],
      ["full", "true", false],
      ["full", "1", false],
      ["full", "null", false],
      ["untrusted", "true", false],
      ["untrusted", "false", true],
      ["untrusted", "undefined", true],
      ["untrusted", "true", true], // the string "true" is not readOnlyHint: true
      ["untrusted", "1", true],
      ["untrusted", "null", true],
    ]);
  });

  it("folding: full (or absent) is full; every other value is untrusted", () => {
    const folded = [undefined, "full", "untrusted", "Full", "FULL", "trusted", "none", "", true, 0, null].map(
      (v) => [
        String(v),
        foldTrust(v),
      ],
    );
    assert.deepEqual(folded, [
      ["undefined", "full"],
      ["full", "full"],
      ["untrusted", "untrusted"],
      ["Full", "untrusted"],
      ["FULL", "untrusted"],
      ["trusted", "untrusted"],
      ["none", "untrusted"],
      ["", "untrusted"],
      ["true", "untrusted"],
      ["0", "untrusted"],
      ["null", "untrusted"],
    ]);
  });

  it("the manifest folds the same way, with a warning for an unknown value", () => {
    const load = (trust?: string) =>
      parseManifest(
        `name: t\nmcp_servers:\n  s:\n    command: node${
          trust === undefined ? "" : `\n    trust: ${trust}`
        }\n`,
        "/tmp/hermit.yaml",
        "/tmp",
      ).manifest;
    assert.equal(load().upstreams.s.trust, "full");
    assert.equal(load("full").upstreams.s.trust, "full");
    assert.equal(load("untrusted").upstreams.s.trust, "untrusted");
    const odd = load("trusted");
    assert.equal(odd.upstreams.s.trust, "untrusted");
    assert.match(
      odd.warnings.map((w) => w.message).join("\n"),
      /trust 'trusted' is not full or untrusted; treated as untrusted/,
    );
  });
});

describe("trust: the approval question", () => {
  it("names the server and the tool, says it may modify external state, asks for one boolean", () => {
    const q = approvalRequest({ server: "files", tool: "write_file", args: { path: "/etc/x" } });
    assert.equal(
      q.message,
      "The untrusted MCP server 'files' wants to run the tool 'write_file', which may modify external state.\n" +
        'Arguments: {"path":"/etc/x"}\nAllow this call?',
    );
    assert.deepEqual((q as { requestedSchema: unknown }).requestedSchema, {
      type: "object",
      properties: {
        approve: {
          type: "boolean",
          title: "Run write_file on files",
          description: "Tick to allow this one call",
        },
      },
      required: ["approve"],
    });
  });

  it("shortens long arguments", () => {
    const q = approvalRequest({ server: "s", tool: "t", args: { text: "x".repeat(2000) } });
    assert.ok(q.message.length < 700);
    assert.match(q.message, /…\nAllow this call\?$/);
  });
});

describe("trust: reading the answer", () => {
  it("only accept with approve: true approves", () => {
    assert.equal(readApproval({ action: "accept", content: { approve: true } }), "approved");
    assert.equal(readApproval({ action: "accept", content: { approve: false } }), "declined");
    assert.equal(readApproval({ action: "accept", content: { approve: "true" } as never }), "declined");
    assert.equal(readApproval({ action: "accept", content: {} }), "declined");
    assert.equal(readApproval({ action: "accept" }), "declined", "Hermes's empty accept is not an approval");
    assert.equal(readApproval({ action: "decline" }), "declined");
    assert.equal(readApproval({ action: "cancel" }), "cancelled");
    assert.equal(readApproval(undefined), "failed");
  });

  it("refusals say the call was not run and why", () => {
    const s = { server: "s", tool: "t", args: {} };
    const tail = "; it was NOT run. Do not retry without explicit user direction.";
    assert.equal(
      refusalText(s, "declined"),
      `refused: t on the untrusted server 's' needs the user's approval and the user declined it${tail}`,
    );
    assert.match(
      refusalText(s, "unavailable"),
      /cannot ask the user for approval \(no elicitation support\)/,
    );
    assert.match(refusalText(s, "cancelled"), /cancelled or timed out/);
    assert.match(refusalText(s, "failed", "boom"), /asking for approval failed \(boom\)/);
  });
});

describe("safe mode (gate 7)", () => {
  it("is on for 1/true/yes/on in any case, off otherwise", () => {
    for (const v of ["1", "true", "TRUE", "yes", "on", "On"]) {
      assert.equal(safeMode({ HERMIT_SAFE_MODE: v }), true, v);
    }
    for (const v of [undefined, "", "0", "false", "no", "off", "2", " 1"]) {
      assert.equal(safeMode({ HERMIT_SAFE_MODE: v }), false, v);
    }
    assert.match(
      SAFE_MODE_NOTICE,
      /^HERMIT_SAFE_MODE is set: no upstream server and no command tool is loaded$/,
    );
  });
});
