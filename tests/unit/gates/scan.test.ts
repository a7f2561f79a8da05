/**
 * Gate 3, the description scan: the pattern lists pinned literally, every poisoned description in
 * tests/fixtures/poisoned flagged with the expected rule, the real npm servers' descriptions
 * (snapshotted in tests/fixtures/real) flagged never, excerpts bounded and hidden characters shown.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import {
  CONCEALMENT_PATTERNS,
  HIDDEN_UNICODE,
  INJECTION_PATTERNS,
  type ScanFinding,
  scanPrompt,
  scanText,
  scanTool,
  visible,
} from "../../../src/gates/scan.ts";
import { fixtures } from "../../helpers/hermit.ts";

const read = (...p: string[]) => JSON.parse(readFileSync(path.join(fixtures, ...p), "utf8"));

describe("scan: pins", () => {
  it("INJECTION_PATTERNS are Hermes's ten _MCP_INJECTION_PATTERNS, in order, case-insensitive", () => {
    assert.deepEqual(INJECTION_PATTERNS.map((r) => r.source), [
      String.raw`ignore\s+(all\s+)?previous\s+instructions`,
      String.raw`you\s+are\s+now\s+a`,
      String.raw`your\s+new\s+(task|role|instructions?)\s+(is|are)`,
      String.raw`system\s*:\s*`,
      String.raw`<\s*(system|human|assistant)\s*>`,
      String.raw`do\s+not\s+(tell|inform|mention|reveal)`,
      String.raw`(curl|wget|fetch)\s+https?:\/\/`,
      String.raw`base64\.(b64decode|decodebytes)`,
      String.raw`exec\s*\(|eval\s*\(`,
      String.raw`import\s+(subprocess|os|shutil|socket)`,
    ]);
    assert.ok(INJECTION_PATTERNS.every((r) => r.flags === "i"));
  });

  it("CONCEALMENT_PATTERNS", () => {
    assert.deepEqual(CONCEALMENT_PATTERNS.map((r) => r.source), [
      String.raw`\b(?:don'?t|do\s+not|never)\s+(?:let|show|alert|notify|warn)\s+the\s+user`,
      String.raw`without\s+(?:telling|informing|notifying|alerting|asking)\s+the\s+user`,
      String.raw`\bthe\s+user\s+(?:must|should)\s+(?:not|never)\s+(?:know|see|be\s+told)`,
      String.raw`\bkeep\s+(?:this|it)\s+(?:a\s+)?(?:secret|hidden|confidential)\b`,
      String.raw`\bhide\s+(?:this|it)\s+from\s+the\s+user`,
      String
        .raw`\b(?:secretly|silently|quietly|covertly)\s+(?:send|forward|upload|exfiltrate|include|append|copy|read)`,
    ]);
    assert.ok(CONCEALMENT_PATTERNS.every((r) => r.flags === "i"));
  });

  it("HIDDEN_UNICODE classes", () => {
    assert.deepEqual(HIDDEN_UNICODE.map((h) => [h.name, h.pattern.source]), [
      ["Unicode TAG characters", String.raw`[\u{E0000}-\u{E007F}]`],
      ["bidirectional control characters", String.raw`[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]`],
      ["zero-width characters", String.raw`[\u200B-\u200D\u2060\u2061-\u2064\uFEFF\u180E]`],
      ["variation selectors (supplement)", String.raw`[\u{E0100}-\u{E01EF}]`],
    ]);
  });
});

function rules(findings: ScanFinding[]): string[] {
  return findings.map((f) => f.rule);
}

describe("scan: the poisoned corpus is flagged", () => {
  const tools = read("poisoned", "tools.json") as { case: string; expect: string; tool: never }[];
  const prompts = read("poisoned", "prompts.json") as { case: string; expect: string; prompt: never }[];
  const instructions = read("poisoned", "instructions.json") as {
    case: string;
    expect: string;
    instructions: string;
  }[];

  it("covers each of the ten patterns, concealment and each hidden-Unicode class", () => {
    const expected = new Set([...tools, ...prompts, ...instructions].map((c) => c.expect));
    for (let i = 1; i <= 10; i++) assert.ok(expected.has(`injection pattern ${i}`), `pattern ${i}`);
    assert.ok(expected.has("concealment phrasing"));
    for (const h of HIDDEN_UNICODE) assert.ok(expected.has(`hidden ${h.name}`), h.name);
  });

  for (const c of tools) {
    it(`tool: ${c.case}`, () => {
      const found = rules(scanTool(c.tool));
      assert.ok(
        found.some((r) => r.startsWith(c.expect)),
        `expected '${c.expect}', got ${JSON.stringify(found)}`,
      );
    });
  }
  for (const c of prompts) {
    it(`prompt: ${c.case}`, () => {
      const found = rules(scanPrompt(c.prompt));
      assert.ok(
        found.some((r) => r.startsWith(c.expect)),
        `expected '${c.expect}', got ${JSON.stringify(found)}`,
      );
    });
  }
  for (const c of instructions) {
    it(`instructions: ${c.case}`, () => {
      const found = rules(scanText("initialize.instructions", c.instructions));
      assert.ok(
        found.some((r) => r.startsWith(c.expect)),
        `expected '${c.expect}', got ${JSON.stringify(found)}`,
      );
    });
  }
});

describe("scan: the real npm servers raise zero findings", () => {
  for (const server of ["everything", "filesystem", "memory"]) {
    it(`@modelcontextprotocol/server-${server}`, () => {
      const snap = read("real", `${server}.json`) as {
        instructions: string | null;
        tools: { name: string }[];
        prompts: { name: string }[];
        resources: { name: string; description?: string }[];
      };
      assert.ok(snap.tools.length > 0, "the snapshot has tools");
      const findings = [
        ...snap.tools.flatMap((t) => scanTool(t)),
        ...snap.prompts.flatMap((p) => scanPrompt(p)),
        ...scanText("initialize.instructions", snap.instructions ?? undefined),
        ...snap.resources.flatMap((r) => scanText(`resource ${r.name}`, r.description)),
      ];
      assert.deepEqual(findings, []);
    });
  }
});

describe("scan: findings", () => {
  it("say where, which rule, and a bounded excerpt around the match", () => {
    const text = "x".repeat(500) + " ignore previous instructions " + "y".repeat(500);
    const [f] = scanText("tool t", text);
    assert.equal(f.where, "tool t");
    assert.match(f.rule, /^injection pattern 1 \(/);
    assert.ok(f.excerpt.includes("ignore previous instructions"));
    assert.ok(f.excerpt.length <= 202, `excerpt of ${f.excerpt.length} characters`);
    assert.ok(f.excerpt.startsWith("…") && f.excerpt.endsWith("…"));
  });

  it("name parameters by their path", () => {
    const tool = {
      name: "t",
      inputSchema: { properties: { a: { properties: { b: { description: "eval(x)" } } } } },
    };
    assert.deepEqual(scanTool(tool).map((f) => f.where), ["tool t parameter a.b"]);
  });

  it("show hidden characters as code points", () => {
    assert.equal(visible("a\u200Bb\u{E0041}\u202Ec\n d"), "a<U+200B>b<U+E0041><U+202E>c d");
  });

  it("show exactly the characters a hidden-Unicode rule reports", () => {
    const ranges = [[0, 0xffff], [0xe0000, 0xe01ff]];
    for (const [from, to] of ranges) {
      for (let cp = from; cp <= to; cp++) {
        if (cp >= 0xd800 && cp <= 0xdfff) continue; // lone surrogates
        const c = String.fromCodePoint(cp);
        const hidden = HIDDEN_UNICODE.some((h) => h.pattern.test(c));
        assert.equal(visible(c).startsWith("<U+"), hidden, `U+${cp.toString(16).toUpperCase()}`);
      }
    }
  });

  it("are empty for plain descriptions and missing text", () => {
    assert.deepEqual(scanText("x", undefined), []);
    assert.deepEqual(scanText("x", "Read a file from the workspace and return its text."), []);
    assert.deepEqual(scanText("x", "Flag of Scotland: \u{1F3F4}"), []);
  });
});
